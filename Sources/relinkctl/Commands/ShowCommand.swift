import ArgumentParser
import RelinkAPI
import RelinkClient

/// `relinkctl show ID`: an identifier's Central1 properties and its connections.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one restore identifier.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: IdentifierArgument

    /// Reads the identifier's `Central1` properties (and its connections from `Manager1.Status`) and prints them.
    func run() async throws {
        let identifier = target.identifier
        let path = try APIPath.central(for: identifier)
        let (props, status, role) = try await global.withManager(identifier: identifier) { manager in
            let props = try await manager.properties(of: path, interface: RelinkNames.central)
            _ = try RelinkCentralProperties(props)
            // The peripheral role's advertising, when it has one (nil from a relinkd without the role).
            return (props, try? await manager.managerProperties(), try? await manager.peripheralManagerState(identifier))
        }
        let entry = try status.flatMap { props throws(RelinkClientError) in try StatusCommand.entry(of: identifier, in: props) }
        let connections = entry?.connections ?? []
        if global.json {
            var doc = JSONForms.properties(props)
            doc["object"] = path.rawValue
            doc["connections"] = JSONForms.encoded(connections)
            if let launch = entry?.launch { doc["launch"] = JSONForms.encoded(launch) }
            if let advertisement = role?.advertisement {
                doc["advertising"] = ["localName": advertisement.localName ?? "", "waiting": role?.advertisementWaiting ?? false]
            }
            Output.json(doc)
            return
        }
        Output.line("Object: \(path.rawValue)")
        for key in props.keys.sorted() { Output.line("\(key): \(JSONForms.text(props[key] ?? .string("")))") }
        for c in connections { Output.line("Connection: \(c.peripheral) \(c.address ?? "") \(c.state)") }
        if let role, let advertisement = role.advertisement {
            // docs/api/PeripheralManager1.md, advertising instances.
            let name = advertisement.localName ?? "(no local name)"
            Output.line(role.advertisementWaiting ? "Advertising: \(name), waiting for an advertising instance (the controller's are all taken)"
                                                  : "Advertising: \(name)")
        }
        if let launch = entry?.launch {
            // docs/relaunch.md: the spec and where its starts are (state, starts in the window, last error).
            let wake = launch.wakeOn.isEmpty ? "every event" : launch.wakeOn.joined(separator: ", ")
            Output.line("Launch: \(launch.busName) on \(wake); \(launch.state), \(launch.startsInWindow) starts in the window"
                        + (launch.lastError.map { ", last error: \($0)" } ?? ""))
        }
    }
}
