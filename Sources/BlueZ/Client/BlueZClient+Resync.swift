import DBus
import Logging
import RelinkModel

// Resynchronisation with bluetoothd: a new owner of org.bluez, a rebuilt
// mirror, what bluetoothd forgets on a restart or power cycle.
extension BlueZClient {

    func ownerChanged(_ newOwner: String?) async {
        if let newOwner, !newOwner.isEmpty {
            guard newOwner != owner else { return }
            forgetHostedRegistrations()  // a new bluetoothd has none of them
            logger.notice("bluetoothd has a new owner; rebuilding the mirror", metadata: [JournalField.event.rawValue: "bluetoothd-restarted", "owner": "\(newOwner)"])
            await resync(reason: .bluetoothdRestarted)
        } else {
            logger.warning("bluetoothd left the bus", metadata: .journal([.event: "bluetoothd-lost"]))
            forgetHostedRegistrations()
            owner = nil
            refused = false  // whether the next one lets relinkd in is asked when it comes
            unanswered = false
            discoverySessions = []
            goingOff = []
            mirror = Mirror(managedObjects: [:], knownNames: mirror.knownNames)
            emit(.serviceLost)
        }
    }

    /// Drops the mirror and rebuilds it from `GetManagedObjects`, then
    /// re-registers the auto-connect profile and re-applies discovery.
    ///
    /// Signals that arrive meanwhile are held and applied afterwards only
    /// if bluetoothd sent them after the snapshot: otherwise a new
    /// bluetoothd's start-up signals (adapter powered, devices added) would
    /// be seen twice, once live and once in the rebuilt mirror, and upper
    /// layers would reconnect or restart discovery twice.
    func resync(reason: ResetReason) async {
        let names = mirror.knownNames
        let wasRefused = refused, wasUnanswered = unanswered
        discoverySessions = []  // a new (or no) bluetoothd has no session of ours
        goingOff = []  // reported anew from the rebuilt mirror
        resyncing = true
        defer { resyncing = false }
        guard let snapshot = await fetchManagedObjects() else {
            if reason == .initial, owner == nil, !refused {
                logger.warning("bluetoothd is not on the bus (org.bluez has no owner); waiting for it",
                               metadata: .journal([.event: "bluetoothd-lost"]))
            }
            owner = nil
            heldSignals = []
            mirror = Mirror(managedObjects: [:], knownNames: names)
            // Still refused, or still not answering: nothing changed.
            if wasRefused && refused && reason == .accessGranted { return }
            if wasUnanswered && unanswered && reason == .bluetoothdAnswered { return }
            emit(.serviceLost)
            return
        }
        mirror = Mirror(managedObjects: snapshot.objects, knownNames: names)
        emit(.reset(reason))
        while !heldSignals.isEmpty {
            let held = heldSignals
            heldSignals = []
            for message in held where message.sender == owner && message.serial > snapshot.serial {
                await applyNow(message)
            }
        }
        resyncing = false
        for adapter in mirror.adapters where adapter.isOn {
            await reapply(adapter: adapter.path)
        }
        resumeWaiters()
    }

    /// Reads bluetoothd's objects again if the bus refused relinkd's calls
    /// or bluetoothd did not answer them.
    func recheckIfUnread() async {
        guard refused || unanswered, !resyncing else { return }
        await resync(reason: refused ? .accessGranted : .bluetoothdAnswered)
    }

    /// Delays between attempts to read a new bluetoothd's objects: a
    /// bluetoothd that has just taken its name may not export `/` yet.
    static let resyncRetryDelays: [Duration] = [.milliseconds(50), .milliseconds(100), .milliseconds(200),
                                                .milliseconds(400), .milliseconds(800), .milliseconds(1600), .milliseconds(3200)]

    /// `GetManagedObjects` of the current bluetoothd, retried while it owns
    /// its name; nil when there is no bluetoothd or it never answered.
    private func fetchManagedObjects() async -> (objects: ManagedObjects, serial: UInt32)? {
        var delays = Self.resyncRetryDelays.makeIterator()
        while true {
            do {
                owner = try await connection.nameOwner(of: BlueZInterface.service)
                guard owner != nil else { return nil }
                let reply = try await connection.callBlueZ(
                    path: .root, interface: BlueZInterface.objectManager,
                    method: "GetManagedObjects", timeout: readTimeout)
                guard let body = reply.body.first else { throw DBusError(.invalidArgs, "empty GetManagedObjects reply") }
                let objects = try body.managedObjects()
                if refused {
                    logger.notice("the bus lets relinkd call bluetoothd again", metadata: .journal([.event: "bluetoothd-access-granted"]))
                }
                if unanswered {
                    logger.notice("bluetoothd answers again", metadata: .journal([.event: "bluetoothd-answering"]))
                }
                refused = false
                unanswered = false
                return (objects: objects, serial: reply.serial)
            } catch is CancellationError {
                return nil
            } catch let error as DBusError where error.name == .accessDenied {
                // The D-Bus policy: retrying at once changes nothing.
                if !refused {
                    logger.error("the bus refuses relinkd's calls to bluetoothd (D-Bus policy); asking again every \(recheck)",
                                 metadata: .journal([.event: "bluetoothd-access-denied", .error: "\(error)"]))
                }
                refused = true
                return nil
            } catch {
                if (error as? DBusError)?.name == .noReply, (try? await stillOwned()) == true {
                    // No reply, and the same bluetoothd still holds its name:
                    // hung (G4 in docs/real-bluez.md: stuck in the kernel, it
                    // kept its name for good); retrying at once only piles
                    // calls up in its queue. relinkd goes on without
                    // bluetoothd and asks again every `recheck`. (A bluetoothd
                    // that exited during the call also ends it with NoReply:
                    // that one is retried below, and its successor is read
                    // when it appears.)
                    if !unanswered {
                        logger.error("bluetoothd holds org.bluez but does not answer (no reply to GetManagedObjects in \(readTimeout)); asking again every \(recheck)",
                                     metadata: .journal([.event: "bluetoothd-not-answering", .error: "\(error)"]))
                    }
                    unanswered = true
                    return nil
                }
                guard let delay = delays.next() else {
                    logger.error("cannot read bluetoothd's objects; waiting for it to restart",
                                 metadata: .journal([.event: "bluetoothd-unreadable", .error: "\(error)"]))
                    return nil
                }
                logger.debug("bluetoothd's objects not readable yet; retrying", metadata: [JournalField.error.rawValue: "\(error)", "delay": "\(delay)"])
                do { try await Task.sleep(for: delay) } catch { return nil }
            }
        }
    }

    /// Whether the bluetoothd last asked (``owner``) still owns `org.bluez`.
    private func stillOwned() async throws -> Bool {
        guard let owner else { return false }
        return try await connection.nameOwner(of: BlueZInterface.service) == owner
    }

    /// Re-registers what bluetoothd forgets for an adapter.
    func reapply(adapter: ObjectPath) async {
        if let profile = autoConnect {
            do {
                try await profile.register(on: adapter, connection: connection)
                autoConnectRegistrations.append((owner, adapter))
            } catch {
                logger.warning("cannot register the auto-connect profile", metadata: ["adapter": "\(adapter)", JournalField.error.rawValue: "\(error)"])
            }
        }
        if let filter = wantedDiscovery[adapter] {
            do { try await applyDiscovery(adapter: adapter, filter: filter) } catch let e as BlueZError where e.failureClass == .inProgress {
                // Refused as busy: being retried, and said so (applyDiscovery).
            } catch {
                logger.warning("cannot resume discovery", metadata: ["adapter": "\(adapter)", JournalField.error.rawValue: "\(error)"])
            }
        }
    }
}
