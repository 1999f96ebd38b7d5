import Testing
import RelinkAPI

@Test func versionIsSemantic() {
    let parts = RelinkVersion.string.split(separator: ".")
    #expect(parts.count == 3)
    #expect(parts.allSatisfy { Int($0) != nil })
}
