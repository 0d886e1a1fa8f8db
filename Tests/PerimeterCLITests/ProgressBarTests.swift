@testable import PerimeterCLI
import Testing

@Suite("Progress bar")
struct ProgressBarTests {
    @Test("drawn on a terminal for long inputs: one redraw per percent, finished with a newline")
    func terminal() {
        let capture = Capture()
        var console = capture.console
        console.errorIsTerminal = true
        var bar = ProgressBar(console: console, total: 200_000, label: "replaying")
        for done in stride(from: 0, through: 200_000, by: 1000) { bar.update(done) }
        let redraws = capture.error.components(separatedBy: "\r").count - 1
        #expect(redraws == 101)
        #expect(capture.error.hasSuffix("[#########################] 100%\n"))
    }

    @Test("silent when standard error is not a terminal, or the input is short")
    func silent() {
        let capture = Capture()
        var bar = ProgressBar(console: capture.console, total: 1_000_000, label: "replaying")
        bar.update(500_000)
        var terminal = capture.console
        terminal.errorIsTerminal = true
        var short = ProgressBar(console: terminal, total: 10, label: "replaying")
        short.update(5)
        #expect(capture.error.isEmpty)
    }
}
