/// A small command-line argument scanner: `--name value`, `--name=value`, boolean `--flag`s, repeated
/// options and positional arguments. Anything it does not know is an error that names it.
struct Arguments {
    private var remaining: [String]
    private let command: String

    /// `arguments` excludes the program and command names; `command` is used in messages.
    init(_ arguments: [String], command: String) {
        self.remaining = arguments
        self.command = command
    }

    /// Whether `--help` or `-h` was given (and removes it).
    mutating func wantsHelp() -> Bool {
        let before = remaining.count
        remaining.removeAll { $0 == "--help" || $0 == "-h" }
        return remaining.count != before
    }

    /// Removes a boolean flag; true when it was present.
    mutating func flag(_ name: String) -> Bool {
        let before = remaining.count
        remaining.removeAll { $0 == "--\(name)" }
        return remaining.count != before
    }

    /// Removes every occurrence of `--name value` / `--name=value` and returns the values in order.
    mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        var kept: [String] = []
        var index = 0
        while index < remaining.count {
            let argument = remaining[index]
            if argument == "--\(name)" {
                guard index + 1 < remaining.count, !remaining[index + 1].hasPrefix("--") else {
                    throw CommandLineError.usage("\(command): option --\(name) needs a value")
                }
                values.append(remaining[index + 1])
                index += 2
            } else if argument.hasPrefix("--\(name)=") {
                values.append(String(argument.dropFirst(name.count + 3)))
                index += 1
            } else {
                kept.append(argument)
                index += 1
            }
        }
        remaining = kept
        return values
    }

    /// Removes `--name value`; `nil` when absent, an error when given twice.
    mutating func option(_ name: String) throws -> String? {
        let values = try options(name)
        guard values.count <= 1 else {
            throw CommandLineError.usage("\(command): option --\(name) given \(values.count) times; give it once")
        }
        return values.first
    }

    /// Removes `--name NUMBER` and checks it is a finite number within `range`.
    mutating func number(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = try option(name) else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw CommandLineError.usage("\(command): --\(name) must be a number from \(format(range.lowerBound)) to \(format(range.upperBound)), not '\(text)'")
        }
        return value
    }

    /// Removes `--name VALUE` where VALUE must be one of `choices`.
    mutating func choice(_ name: String, _ choices: [String]) throws -> String? {
        guard let value = try option(name) else { return nil }
        guard choices.contains(value) else {
            throw CommandLineError.usage("\(command): --\(name) must be one of \(choices.joined(separator: ", ")), not '\(value)'")
        }
        return value
    }

    /// The positional arguments left; fails on any leftover option.
    mutating func positionals() throws -> [String] {
        if let unknown = remaining.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            throw CommandLineError.usage("\(command): unknown option '\(unknown)' (see 'perimeter \(command) --help')")
        }
        defer { remaining = [] }
        return remaining
    }

    /// Fails when anything is left.
    mutating func finish() throws {
        let rest = try positionals()
        if let first = rest.first {
            throw CommandLineError.usage("\(command): unexpected argument '\(first)' (see 'perimeter \(command) --help')")
        }
    }

    private func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// A failure that ends a command with a message and an exit status.
enum CommandLineError: Error, CustomStringConvertible {
    /// Bad usage: unknown option, missing or malformed value. Exit status 64 (EX_USAGE).
    case usage(String)
    /// Bad input data or a missing file. Exit status 65 (EX_DATAERR) or 66 (EX_NOINPUT).
    case data(String)
    case noInput(String)
    /// Could not write an output file. Exit status 73 (EX_CANTCREAT).
    case cannotCreate(String)

    var description: String {
        switch self {
        case .usage(let m), .data(let m), .noInput(let m), .cannotCreate(let m): m
        }
    }

    var exitStatus: Int32 {
        switch self {
        case .usage: 64
        case .data: 65
        case .noInput: 66
        case .cannotCreate: 73
        }
    }
}
