/// A one-line progress bar on standard error, drawn only when standard error is a terminal and the
/// work is long enough to be worth watching.
struct ProgressBar {
    private let console: Console
    private let total: Int
    private let enabled: Bool
    private var lastPercent = -1

    init(console: Console, total: Int, label: String) {
        self.console = console
        self.total = max(total, 1)
        self.enabled = console.errorIsTerminal && total >= 100_000
        self.label = label
    }

    private let label: String

    mutating func update(_ done: Int) {
        guard enabled else { return }
        let percent = min(100, done * 100 / total)
        guard percent != lastPercent else { return }
        lastPercent = percent
        let filled = percent / 4
        console.error("\r\(label) [" + String(repeating: "#", count: filled) + String(repeating: ".", count: 25 - filled) + "] \(percent)%")
        if percent == 100 { console.error("\n") }
    }
}
