/// Collects warnings for one read, keeping at most `limit` of them individually and counting the rest,
/// so that a huge broken file cannot produce millions of reports (nothing is dropped silently: the
/// overflow is reported as one summary warning).
struct ProblemLog {
    let source: String
    let limit: Int
    private(set) var problems: [TrackProblem] = []
    private var overflow = 0

    init(source: String, limit: Int = 1000) {
        self.source = source
        self.limit = limit
    }

    /// Records one problem.
    mutating func add(line: Int?, column: Int? = nil, _ message: String) {
        if problems.count < limit {
            problems.append(TrackProblem(source: source, line: line, column: column, message: message))
        } else {
            overflow += 1
        }
    }

    /// Sets the line and column of the problem at `index` in ``problems`` (found after it was added).
    mutating func place(problemAt index: Int, line: Int, column: Int) {
        guard problems.indices.contains(index) else { return }
        problems[index].line = line
        problems[index].column = column
    }

    /// The problems in file order, with a summary of any that went over the limit.
    func finished() -> [TrackProblem] {
        var result = problems.enumerated().sorted { lhs, rhs in
            (lhs.element.line ?? 0, lhs.offset) < (rhs.element.line ?? 0, rhs.offset)
        }.map(\.element)
        if overflow > 0 {
            result.append(TrackProblem(source: source, message:
                "\(overflow) more problems like the ones above were not listed individually"))
        }
        return result
    }
}
