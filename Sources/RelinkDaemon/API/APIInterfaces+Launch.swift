import DBus
import RelinkAPI
import RelinkModel
import Restoration

// Manager1.Register (with its `launch` option) and Manager1.SetLaunch: a
// launch spec is checked off the loop (the bus's activatable names, the
// activation file's user: ``ProgramLauncher/check(_:uid:)``) before the
// loop stores it (docs/relaunch.md).
extension APIInterfaces {
    static let optionsType = DBusType.dictionary(key: .string, value: .variant)

    /// `Register(s identifier, a{sv} options) -> (o central, a{sv} restored)`.
    var registerMethod: DBusMethod {
        let daemon = self.daemon, identity = self.identity
        return DBusMethod(Manager1Member.register.rawValue, in: [DBusArgument("identifier", .string), DBusArgument("options", Self.optionsType)],
                          out: [DBusArgument("central", .objectPath), DBusArgument("restored", Self.optionsType)], ordered: true) { call in
            let (request, launch) = try Self.register(try ControlArguments(call, count: 2))
            let caller = try await identity.caller(of: call)
            if let spec = launch ?? nil { try await daemon.checkLaunch(spec, for: caller) }
            // With a launch spec the turn is held until its request is queued too.
            let result = try await daemon.submit(request, from: caller, queued: launch == nil ? call.endTurn : nil).get()
            // The identifier exists now (a new one is created by the call).
            if let launch, case .register(let id, _, _, _) = request {
                _ = try await daemon.submit(.setLaunch(id, launch), from: caller, queued: call.endTurn).get()
            }
            if let delivery = result.delivery {
                call.afterReply { daemon.requestDelivery(delivery.id, to: caller.name, after: delivery.after) }
            }
            return result.values
        }
    }

    /// `SetLaunch(s identifier, a{sv} spec)`: `bus_name` `""` removes it.
    var setLaunchMethod: DBusMethod {
        let daemon = self.daemon, identity = self.identity
        return DBusMethod(Manager1Member.setLaunch.rawValue, in: [DBusArgument("identifier", .string), DBusArgument("spec", Self.optionsType)],
                          ordered: true) { call in
            let a = try ControlArguments(call, count: 2)
            let id = try a.identifier(0)
            let spec = try LaunchOptions.spec(in: try a.options(1, allowed: LaunchOptions.keys))
            let caller = try await identity.caller(of: call)
            if let spec { try await daemon.checkLaunch(spec, for: caller) }
            _ = try await daemon.submit(.setLaunch(id, spec), from: caller, queued: call.endTurn).get()
            return []
        }
    }

    /// Register's arguments, and its `launch` option (nil: not given;
    /// `.some(nil)`: remove the spec).
    static func register(_ a: ControlArguments) throws(RelinkError) -> (APIRequest, LaunchSpec??) {
        let id = try a.identifier(0)
        let o = try a.options(1, allowed: ["name_rule": .string, "replay": .boolean, "event_limit": .uint32, "launch": optionsType])
        var rule: NamePreference?
        switch o["name_rule"] {
        case .string("gap")?: rule = .gapName
        case .string("advertising")?: rule = .advertisingName
        case nil: rule = nil
        default: throw RelinkError(.invalidArguments, "name_rule must be gap or advertising")
        }
        var replay = true
        if case .boolean(let b)? = o["replay"] { replay = b }
        var eventLimit: Int?
        if case .uint32(let n)? = o["event_limit"] {
            guard (1...StoreMapping.maximumEventLimit).contains(Int(n)) else {
                throw RelinkError(.invalidArguments, "event_limit must be 1...\(StoreMapping.maximumEventLimit), got \(n)")
            }
            eventLimit = Int(n)
        }
        var launch: LaunchSpec??
        if let value = o["launch"] {
            launch = .some(try LaunchOptions.spec(in: try ControlArguments(values: [value]).options(0, allowed: LaunchOptions.keys)))
        }
        return (.register(id, nameRule: rule, replay: replay, eventLimit: eventLimit), launch)
    }
}

extension ControlArguments {
    /// Arguments already taken from a call (a nested `a{sv}`).
    init(values: [DBusValue]) { self.values = values }
}
