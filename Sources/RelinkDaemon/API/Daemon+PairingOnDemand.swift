import BlueZ
import DBus
import Logging
import RelinkAPI
import RelinkModel
import Restoration

// Pairing on demand (issue 24; docs/api/Central1.md, "Pairing on demand"):
// when the peripheral refuses a read, a write or a subscription for
// insufficient authentication or encryption (``FailureMapping/needsPairing(_:)``)
// and the intent lets it (`Connect`'s `pair_on_demand`, default on, as
// CoreBluetooth does), relinkd pairs through its agent once and tries the
// operation once more. A failed pairing is `AuthenticationFailed` (the
// method's error, or a `subscription-failed` event); a refusal after the
// pairing goes to the client as it is. Never a loop: one pairing per
// call, one per link for subscriptions.
extension Daemon {
    /// Runs a read or write (`body`, a BlueZ call); when the peripheral
    /// refuses it for want of encryption and the identifier's intent pairs
    /// on demand, pairs and runs it once more; `beforePairing` runs just
    /// before that pairing (the pairing may wait for the caller's
    /// `AnswerPairing`).
    /// - Throws: `body`'s error when it is no such refusal or the intent
    ///   does not pair on demand; the pairing's (`AuthenticationFailed`,
    ///   ...); the second run's.
    nonisolated func pairingOnDemand<T: Sendable>(_ id: RestoreIdentifier, _ ref: PeripheralRef, from caller: APICaller,
                                                  operation: String, beforePairing: (@Sendable () -> Void)? = nil,
                                                  _ body: @Sendable () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            guard FailureMapping.needsPairing(FailureMapping.failure(error)) else { throw error }
            guard let target = try? await pairingTarget(id, ref, from: caller), target.onDemand else { throw error }
            env.logger.notice("pairing on demand", metadata: .journal([
                .event: "pairing-on-demand", .restoreID: "\(id)", .peripheral: "\(target.peripheral)", .decision: "\(operation)",
                .error: "\(FailureMapping.failure(error).errorName)",
            ]))
            beforePairing?()
            try await pairDevice(id, target, why: operation)
            return try await body()
        }
    }

    /// A StartNotify that failed on the current link: when the peripheral
    /// refused it for want of encryption (or the pairing for it failed),
    /// pairs on demand once per link and characteristic if a subscriber's
    /// intent allows (returns true: StartNotify is issued again after the
    /// pairing, its outcome a ``DaemonInput/notifyDone(_:_:_:)`` again);
    /// else tells the subscribers once per link and characteristic with a
    /// `subscription-failed` event (``securityRefusal(_:_:)``) and returns
    /// false. Any other failure: false, nothing done.
    func securityFailure(_ notify: RestoreBatch.Notify, _ issued: HeldSessions.Issued, _ failure: ConnectionFailure) async -> Bool {
        let pairingFailed = failure.errorName == RelinkErrorName.authenticationFailed.rawValue
        guard pairingFailed || FailureMapping.needsPairing(failure) else { return false }
        var memo = known.pairedOnDemand[notify.peripheral] ?? OnDemandPairing(link: issued)
        if !writes.batch.held.sameLink(notify.peripheral, since: memo.link) { memo = OnDemandPairing(link: issued) }
        defer { known.pairedOnDemand[notify.peripheral] = memo }
        if memo.tried.insert(notify.key).inserted, await pairForSubscription(notify, issued) { return true }
        if memo.reported.insert(notify.key).inserted { securityRefusal(notify, failure) }
        return false
    }

    /// Starts the pairing and the second StartNotify for a subscriber whose
    /// intent pairs on demand; false when none does or the link is gone.
    private func pairForSubscription(_ notify: RestoreBatch.Notify, _ issued: HeldSessions.Issued) async -> Bool {
        let subscribers = core.planner.route(notify.peripheral, characteristic: notify.key)
        guard let id = subscribers.first(where: { core.machines[ConnectionIntentID(identifier: $0, peripheral: notify.peripheral)]?.options.pairOnDemand == true }),
              let device = await linkedDevice(of: notify.peripheral) else { return false }
        let capability = core.machines[ConnectionIntentID(identifier: id, peripheral: notify.peripheral)]?.options.pairingCapability ?? .noInputNoOutput
        let target = PairingTarget(device: device.path, peripheral: notify.peripheral.description, onDemand: true, capability: capability)
        var metadata = deviceFields(notify.peripheral)
        metadata[JournalField.characteristic.rawValue] = "\(notify.key)"
        logger.notice("pairing on demand", metadata: metadata.merging(.journal([
            .event: "pairing-on-demand", .restoreID: "\(id)", .decision: "Subscribe",
        ])) { $1 })
        let bluez = self.bluez
        loop.spawned.append { [self] in
            do throws(RelinkError) {
                try await pairDevice(id, target, why: "Subscribe")
            } catch {
                return [.notifyDone(notify, issued, ConnectionFailure(.notPermitted, errorName: error.code.rawValue, message: error.message))]
            }
            do {
                try await bluez.startNotify(notify.characteristic)
                return [.notifyDone(notify, issued, nil)]
            } catch {
                return [.notifyDone(notify, issued, FailureMapping.failure(error))]
            }
        }
        return true
    }

    /// A subscription that stays refused for want of encryption (the
    /// pairing failed, the intent does not pair on demand, or the
    /// peripheral refused it after the pairing): its subscribers get a
    /// `subscription-failed` event naming why, once per link.
    func securityRefusal(_ notify: RestoreBatch.Notify, _ failure: ConnectionFailure) {
        let subscribers = core.planner.route(notify.peripheral, characteristic: notify.key)
        do {
            try emitGathered(.subscriptionFailed(peripheral: notify.peripheral, characteristic: notify.key, reason: failure), to: subscribers)
        } catch {
            logger.error("subscription-failed event not stored: \(error)")
        }
    }
}

/// What relinkd did on one link of a peripheral for subscriptions refused
/// for want of encryption: which characteristics it paired for and which
/// it told the subscribers about (each once per link).
struct OnDemandPairing: Sendable {
    /// The link (stamped as a StartNotify is).
    var link: HeldSessions.Issued
    /// Characteristics a pairing on demand was made for.
    var tried: Set<CharacteristicKey> = []
    /// Characteristics whose refusal was reported.
    var reported: Set<CharacteristicKey> = []
}
