import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// What the transport keeps for one request between libmicrohttpd's calls.
final class RequestContext: @unchecked Sendable {
    // Touched only by the loop thread that serves the connection.
    var body: [UInt8] = []
    var tooLarge = false
    var fields: [String: String] = [:]
    /// The responder of the request, once its handler ran (the answer may still be pending).
    var responder: HTTPResponder?

    /// Adds one field; a repeated name keeps its values joined with `", "`.
    func collect(_ name: String, _ value: UnsafePointer<CChar>?) {
        let text = value.map { String(cString: $0) } ?? ""
        if let previous = fields[name] {
            fields[name] = previous + ", " + text
        } else {
            fields[name] = text
        }
    }
}

extension HTTPServer {
    /// libmicrohttpd's request callback: the first call allocates the request context, the next ones
    /// carry body chunks, the last one (no data) runs the handler and queues its response.
    static let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, contextSlot in
        guard let cls, let connection, let contextSlot else { return .NO }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        guard let raw = contextSlot.pointee else {
            contextSlot.pointee = Unmanaged.passRetained(RequestContext()).toOpaque()
            server.state.withLock { $0.inFlight += 1 }
            // The head is read: refuse framing that a proxy could read differently, before any body.
            let problem = perimeter_mhd_framing_problem(connection)
            guard problem == 0 else {
                let detail = switch problem {
                case 1: "the request carries Content-Length headers with different values; send exactly one"
                case 2: "the request's Content-Length is not a decimal number of bytes"
                default: "the request carries both Content-Length and Transfer-Encoding; send one of them"
                }
                perimeter_mhd_request_arrived(connection)
                var response = server.configuration.transportError(400, detail, url.map { String(cString: $0) } ?? "/")
                response.headers.append(("Connection", "close"))
                return server.queue(response, on: connection)
            }
            // A declared body over the limit is refused before it is sent, not read and discarded.
            let declared = perimeter_mhd_declared_length(connection)
            if declared > Int64(server.configuration.maximumBodySize) {
                perimeter_mhd_request_arrived(connection)
                var response = server.configuration.transportError(
                    413, "the body of \(declared) bytes exceeds \(server.configuration.maximumBodySize) bytes; split it into smaller requests",
                    url.map { String(cString: $0) } ?? "/")
                response.headers.append(("Connection", "close"))
                return server.queue(response, on: connection)
            }
            return .YES
        }
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        if let uploadSize, uploadSize.pointee > 0 {
            let count = uploadSize.pointee
            if !context.tooLarge, let uploadData {
                if context.body.count + count > server.configuration.maximumBodySize {
                    context.tooLarge = true
                    context.body = []
                } else {
                    if context.body.isEmpty {
                        // Room for the declared length (already within the limit) once the body starts
                        // coming: growing a 36 MB body by doubling copied it about twice over.
                        let declared = perimeter_mhd_declared_length(connection)
                        if declared > count { context.body.reserveCapacity(Int(declared)) }
                    }
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
                        context.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
                    }
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        // Called again with `context.responder` set: after the loop's round hook, or after a resume.
        let responder: HTTPResponder
        if let pending = context.responder {
            responder = pending
        } else {
            perimeter_mhd_request_arrived(connection)
            let request = server.makeRequest(connection, url: url, method: method, context: context)
            responder = HTTPResponder(connection: server.loopConnection(connection))
            context.responder = responder
            server.handler(request, responder)
            if let answer = responder.takeAnswer() { return server.queue(answer(), on: connection) }
            // Answered later: registered, so that `stop` can answer a request whose answer never comes.
            // Not suspended yet: libmicrohttpd calls again in the loop's next turn, after the round hook,
            // which usually answered it (a shared commit) — no suspend and resume for those. Still
            // unanswered then, the connection is suspended below until the answer comes.
            server.register(responder)
            return .YES
        }
        guard let answer = responder.takeAnswerOrSuspend() else {
            server.state.withLock { $0.suspensions += 1 }
            return .YES
        }
        server.unregister(responder)
        return server.queue(answer(), on: connection)
    }

    /// libmicrohttpd's completion callback: releases the request context.
    static let completedHandler: MHD_RequestCompletedCallback = { cls, connection, contextSlot, _ in
        // The next request's deadline starts now.
        if let connection { perimeter_mhd_request_completed(connection) }
        guard let cls, let contextSlot, let raw = contextSlot.pointee else { return }
        Unmanaged<RequestContext>.fromOpaque(raw).release()
        contextSlot.pointee = nil
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        server.state.withLock { $0.inFlight -= 1 }
    }

    /// Collects query fields into the context's scratch dictionary.
    static let fieldCollector: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let context = Unmanaged<RequestContext>.fromOpaque(cls).takeUnretainedValue()
        context.collect(String(cString: key), value)
        return .YES
    }

    /// Collects headers into the context's scratch dictionary, names lower-cased here (once, while
    /// copying them out of libmicrohttpd) so that ``HTTPRequest`` need not rebuild the dictionary.
    static let headerCollector: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let context = Unmanaged<RequestContext>.fromOpaque(cls).takeUnretainedValue()
        let length = strlen(key)
        let name = String(unsafeUninitializedCapacity: length) { buffer in
            for index in 0..<length {
                let byte = UInt8(bitPattern: key[index])
                buffer[index] = byte >= 65 && byte <= 90 ? byte + 32 : byte
            }
            return length
        }
        context.collect(name, value)
        return .YES
    }

    /// Streams: copies buffered bytes or suspends the connection until more arrive.
    static let contentReader: MHD_ContentReaderCallback = { cls, _, buffer, maximum in
        guard let cls, let buffer else { return Int(perimeter_mhd_end_of_stream()) }
        let box = Unmanaged<StreamBox>.fromOpaque(cls).takeUnretainedValue()
        return box.stream.read(into: buffer, maximum: maximum)
    }

    /// Streams: the response was released (sent, client gone, or server stopping).
    static let contentReaderFree: MHD_ContentReaderFreeCallback = { cls in
        guard let cls else { return }
        let box = Unmanaged<StreamBox>.fromOpaque(cls).takeRetainedValue()
        box.server.unregister(box.stream)
        box.stream.markClosed()
    }

    func makeRequest(_ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                     context: RequestContext) -> HTTPRequest {
        let opaque = Unmanaged.passUnretained(context).toOpaque()
        context.fields = [:]
        MHD_get_connection_values(connection, .HEADER_KIND, Self.headerCollector, opaque)
        let headers = context.fields
        context.fields = [:]
        MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, Self.fieldCollector, opaque)
        let query = context.fields
        context.fields = [:]
        let remote = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { address in
            perimeter_mhd_client_address(connection, address.baseAddress!, address.count)
            return String(cString: address.baseAddress!)
        }
        return HTTPRequest(method: method.map { String(cString: $0) } ?? "GET",
                           path: url.map { String(cString: $0) } ?? "/",
                           query: query, lowercasedHeaders: headers,
                           body: context.tooLarge ? [] : context.body,
                           remoteAddress: remote, isBodyTooLarge: context.tooLarge)
    }

    func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let handle: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            handle = bytes.withUnsafeBytes { raw in
                perimeter_mhd_response_copying(raw.baseAddress, raw.count)
            }
        case .stream(let stream):
            stream.attach(loopConnection(connection))
            register(stream)
            let box = Unmanaged.passRetained(StreamBox(stream: stream, server: self)).toOpaque()
            handle = MHD_create_response_from_callback(perimeter_mhd_size_unknown(), 4096, Self.contentReader, box,
                                                       Self.contentReaderFree)
            if handle == nil {
                Unmanaged<StreamBox>.fromOpaque(box).release()
                unregister(stream)
            }
        }
        guard let handle else { return .NO }
        for header in response.headers {
            _ = MHD_add_response_header(handle, header.name, header.value)
        }
        let result = MHD_queue_response(connection, UInt32(clamping: response.status), handle)
        MHD_destroy_response(handle)
        return result
    }
}

/// Keeps a stream and its server alive while libmicrohttpd holds the response.
final class StreamBox: Sendable {
    let stream: HTTPStream
    let server: HTTPServer

    init(stream: HTTPStream, server: HTTPServer) {
        self.stream = stream
        self.server = server
    }
}
