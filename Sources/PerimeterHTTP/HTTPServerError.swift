/// Why an ``HTTPServer`` could not start.
public struct HTTPServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, naming the address and port.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// A libmicrohttpd handle (daemon or connection) that may cross threads: libmicrohttpd synchronises
/// its own use of them; we only pass them back to it.
struct CHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A typed C pointer crossing threads; the owner says which thread may use it when.
struct CPointer<Pointee>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Pointee>
}
