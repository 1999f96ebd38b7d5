import Foundation
import RelinkClient
import RelinkModel

/// One event as a line a person can scan (`relinkctl events` without
/// `--json`): the sequence number, when relinkd stored the event (local
/// time), the kind, then the peripheral and what the event says, values as
/// ``ValueText``. A payload this relinkctl cannot decode (a kind it does not
/// know) keeps its JSON.
enum EventLine {
    /// `SEQ TIME KIND DETAILS`; TIME is `-` for an event stored without one.
    static func text(_ e: RelinkClientEvent, timeZone: TimeZone = .current) -> String {
        let head = "\(e.sequence) \(e.time.map { time($0, in: timeZone) } ?? "-") \(e.kind.rawValue)"
        guard let event = e.payload else { return "\(head) \(e.payloadJSON)" }
        let details = details(event)
        return details.isEmpty ? head : "\(head) \(details)"
    }

    /// `2026-11-29T16:02:24.123`, in `timeZone`.
    static func time(_ date: Date, in timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let total = date.unixMilliseconds
        let milliseconds = Int(((total % 1000) + 1000) % 1000)
        let second = Date(unixMilliseconds: total - Int64(milliseconds))
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: second)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
                      c.second ?? 0, milliseconds)
    }

    /// What follows the kind (nothing for `ready-to-update`).
    static func details(_ event: RelinkEvent) -> String {
        switch event {
        case .discovered(let p, let ad):
            var parts = [p.description, ad.address.string]
            if let name = ad.localName { parts.append(ValueText.quoted(name)) }
            if let rssi = ad.rssi { parts.append("rssi \(rssi)") }
            if !ad.serviceUUIDs.isEmpty { parts.append("services " + ad.serviceUUIDs.map(\.string).sorted().joined(separator: ",")) }
            return parts.joined(separator: " ")
        case .connected(let p, let address, let route, let limits), .restored(let p, let address, let route, let limits):
            return "\(p) \(address.string) via \(route.rawValue)" + (limits.map { " (mtu \($0.mtu))" } ?? "")
        case .failedToConnect(let p, let reason):
            return "\(p) \(reason)"
        case .disconnected(let p, let reason):
            return "\(p) " + (reason.map(\.description) ?? "(asked for)")
        case .valueNotified(let p, let key, let value):
            return "\(p) \(key) \(ValueText.line(value))"
        case .nameUpdated(let p, let update):
            var line = "\(p) \(update.change.source.rawValue) name \(ValueText.quoted(update.change.current))"
            if let previous = update.change.previous { line += " (was \(ValueText.quoted(previous)))" }
            if let resolved = update.resolved { line += ", shown \(ValueText.quoted(resolved.name))" }
            return line
        case .subscriptionFailed(let p, let key, let reason):
            return "\(p) \(key) \(reason)"
        case .notificationState(let p, let key, let notifying, let reason):
            return "\(p) \(key) " + (notifying ? "notifying" : "not notifying: " + (reason.map(\.description) ?? "unsubscribed"))
        case .connectionEvent(let p, let address, let connected, let reason):
            return "\(p)" + (address.map { " \($0.string)" } ?? "") + (connected ? " peer-connected" : " peer-disconnected")
                + (reason.map { ": \($0.description)" } ?? "")
        case .adapterState(let adapter, let status):
            return "\(adapter) \(status.state.rawValue)" + (status.roles.isEmpty ? "" : " roles " + status.roles.map(\.rawValue).joined(separator: ","))
        case .servicesChanged(let p, let database):
            return "\(p) \(database.services.count) service(s)"
        case .bondRemoved(let p):
            return p.description
        case .pairingRequest(let p, let request, let kind, let passkey):
            return "\(p) request \(request) \(kind)" + (passkey.map { " passkey \(String(format: "%06u", $0))" } ?? "")
        case .peripheralManager(let event):
            switch event {
            case .readRequest(let request, let central, let key, let offset, _):
                return "request \(request) from \(central) \(key) offset \(offset)"
            case .writeRequest(let request, let central, let key, let offset, let value, let kind, _):
                return "request \(request) from \(central) \(key) offset \(offset) \(kind.rawValue) \(ValueText.line(value))"
            case .subscribed(let central, let key), .unsubscribed(let central, let key):
                return "\(central) \(key)"
            case .readyToUpdate:
                return ""
            }
        case .transfer(let event):
            let status = event.status
            var line = "\(status.peripheral) \(status.characteristic) \(status.transfer) \(status.offset)/\(status.length) bytes"
            if case .failed(_, let reason) = event { line += " \(reason)" }
            return line
        }
    }
}
