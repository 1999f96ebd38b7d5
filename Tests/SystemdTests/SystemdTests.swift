import Testing
@testable import Systemd
