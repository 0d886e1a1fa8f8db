// The `perimeter` executable: all behaviour lives in PerimeterCLI so it can be tested in-process.
import Foundation
import PerimeterCLI

exit(Perimeter.main(Array(CommandLine.arguments.dropFirst())))
