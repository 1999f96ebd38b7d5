import Testing
@testable import RelinkStore
