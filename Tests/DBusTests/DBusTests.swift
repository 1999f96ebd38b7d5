import Testing
@testable import DBus
