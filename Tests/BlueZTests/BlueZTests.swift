import Testing
@testable import BlueZ
