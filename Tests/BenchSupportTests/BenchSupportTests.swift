import Testing
@testable import BenchSupport
