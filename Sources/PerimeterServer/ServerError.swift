/// Why the server could not start.
public struct ServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
