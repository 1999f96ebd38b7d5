import BenchSupport
import DBus
import Foundation

/// A lock that rotates its resolvable private address (BlueZoo patch 27,
/// `BenchOptions.lockPrivacy`): its current RPA, and the `Device1` object
/// that stands for it on the central, whose path is not its address.
extension Harness {
    /// The peripheral's current resolvable private address: a new one,
    /// rotated now (the bench's `rotate_address`).
    func rotate(_ peripheral: String) async throws -> String {
        let reply = try await bench.send(BenchCommand("rotate_address", ["peripheral": .string(peripheral)]))
        guard case .string(let rpa)? = reply["address"] else { throw TimeoutError(what: "an RPA in \(reply)") }
        return rpa
    }

    /// The central's `Device1` object that shows `address` (a rotating
    /// lock's identity): the object first found at an RPA (its path stays
    /// when the identity is learnt), or after a bluetoothd restart the one
    /// at `dev_<IDENTITY>`. When none shows it, the path named by the address.
    func deviceObject(showing address: String) async throws -> ObjectPath {
        let named = try ObjectPath("/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_"))
        let reply = try await control.connection.call(
            destination: "org.bluez", path: try ObjectPath("/"), interface: "org.freedesktop.DBus.ObjectManager", method: "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = reply.body.first else { return named }
        for entry in objects {
            guard case .objectPath(let path) = entry.key, path.rawValue.hasPrefix("/org/bluez/hci0/"),
                  case .dictionary(_, _, let interfaces) = entry.value else { continue }
            for iface in interfaces where iface.key == .string("org.bluez.Device1") {
                guard case .dictionary(_, _, let props) = iface.value else { continue }
                if props.contains(where: { $0.key == .string("Address") && $0.value == .variant(.string(address)) }) { return path }
            }
        }
        return named
    }
}
