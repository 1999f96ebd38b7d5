import DaemonCore
import Logging
import RelinkModel
import Restoration
import Systemd

// Carrying out what the ``DaemonCore`` decided, effect by effect, in order.
extension Daemon {
    /// Carries out `effects` in order, awaiting each.
    func perform(_ effects: [DaemonCore<DaemonClock>.Effect]) async {
        for effect in effects {
            switch effect {
            case .machineActions(let intent, let actions): await perform(actions, for: intent)
            case .feedEach(let intents, let input): for intent in intents { await feed(intent, input) }
            case .readResolvedDatabases: await readResolvedDatabases()
            case .hostAll(let reason): await hostAll(reason: reason)
            case .hostAfterPowerOn: await hostAfterPowerOn()
            case .discovered(let advertisement, let id): await discovered(advertisement, by: id)
            case .subscriptionCommands(let commands): await run(commands)
            case .lookAtGatt(let peripheral):
                let link = await linkGatt(of: peripheral)?.1
                await perform(core.handle(.gattLooked(peripheral, link)))
            case .failSubscriptions(let failed): await failSubscriptions(failed)
            case .applyAutoConnect: await applyAutoConnect(renew: false)
            case .rediscoverServices(let peripheral, let attempt, let missing): await rediscoverServices(peripheral, attempt: attempt, missing: missing)
            case .readGattDatabase(let peripheral): await readGattDatabase(peripheral)
            case .noteBond(let peripheral, let bonded): await noteBond(of: peripheral) { $0.bonded = bonded }
            case .bondRemoved(let peripheral, let identifiers): await bondRemoved(peripheral, identifiers: identifiers)
            case .deviceObjectGone(let peripheral): deviceObjectGone(peripheral)
            default: queue([effect])
            }
        }
    }

    /// Carries out `effects` that need no waiting, in order, from a path
    /// that cannot wait (a notified value, a status report). Machine inputs
    /// go to the loop's queue of immediate inputs, fed after the current
    /// input as any machine input decided meanwhile.
    func queue(_ effects: [DaemonCore<DaemonClock>.Effect]) {
        for effect in effects {
            switch effect {
            case .machineInputAfter(let intent, let input): loop.immediate.append((intent, input))
            case .feedEach(let intents, let input): for intent in intents { loop.immediate.append((intent, input)) }
            case .announceAdapter(let announcement, let identifiers): announce(announcement, to: identifiers)
            case .adapterAsAnnounced(let status):
                logger.info("adapter \(adapterName) is \(status), as last announced", metadata: .journal([
                    .adapter: "\(adapterName)", .adapterState: "\(status.state.rawValue)", .adapterRoles: "\(Self.rolesText(status))",
                ]))
            case .bluetoothdLost:
                logger.warning("bluetoothd left the bus or does not answer: relinkd counts every link as gone", metadata: .journal([.event: "bluetoothd-lost"]))
                publisher?.setReady(false)
            case .bluetoothdBack(let why):
                publisher?.setReady(true)
                switch why {
                case .accessGranted:
                    logger.notice("the bus lets relinkd call bluetoothd again: restoring every link", metadata: .journal([.event: "bluetoothd-access-granted"]))
                case .answered:
                    logger.notice("bluetoothd answers again: restoring every link", metadata: .journal([.event: "bluetoothd-answering"]))
                case .restarted:
                    logger.notice("bluetoothd restarted: every link and notify session is gone", metadata: RelinkMessageID.bluetoothdRestarted.metadata)
                }
            case .adapterPowerReported(let on):
                logger.notice("adapter powered \(on ? "on" : "off")",
                              metadata: RelinkMessageID.adapterPowerChanged.metadata.merging(.journal([.adapter: "\(adapterName)"])) { $1 })
            case .endNotifySessions: writes.batch.held.endAll()
            case .endNotifySessionsOf(let peripheral): writes.batch.held.linkDown(peripheral)
            case .gattGraceTimer(let peripheral, let generation): input(.gattCheck(peripheral, generation: generation), after: GattGrace.period)
            case .characteristicNotYetOnLink, .characteristicLeftLink, .rediscoverLater, .waitForGatt: journalGatt(effect)
            case .refreshViewers(let peripheral): refreshViewers(of: peripheral)
            case .notificationStates(let changes):
                for change in changes {
                    do { try emitGathered(change.event, to: change.identifiers) } catch {
                        logger.error("notification-state event not stored: \(error)")
                    }
                }
            case .connectionEvents(let told): tellConnectionEvents(told)
            case .gattSettleTimer(let peripheral, let generation):
                input(.gattDatabaseSettled(peripheral, generation: generation), after: Self.gattSettleTime)
            case .storeGattDatabase(let peripheral, let database): storeGattDatabase(peripheral, database, changedFor: nil)
            case .servicesChanged(let peripheral, let database, let identifiers): storeGattDatabase(peripheral, database, changedFor: identifiers)
            case .startProgram, .programAnswered, .relaunchTimer, .relaunchFailed, .relaunchLimitReached, .launchSpecChanged:
                performRelaunch(effect)
            case .subscriptionCommands, .lookAtGatt, .failSubscriptions, .applyAutoConnect, .rediscoverServices, .noteBond, .bondRemoved, .readGattDatabase,
                 .deviceObjectGone,
                 .machineActions, .readResolvedDatabases, .hostAll, .hostAfterPowerOn, .discovered,
                 .followAddressChange, .peripheralSeen, .peripheralChanged, .pairedByBluetoothd,
                 .writeStreamsLinkChanged, .transfersLinkChanged, .linkEndCauseUsed, .checkHalfOpenLater, .gattObjectsMoved,
                 .halfOpenLinkLost, .disconnectHalfOpen:
                // Only ``perform(_:)`` (a device's change: the device's own
                // performer in Daemon+BlueZ) carries these out, and no input
                // handed to this path yields them: one that did would change
                // the loop's order. Tests stop here; relinkd says so in the journal.
                assertionFailure("\(effect) decided outside an input's turn")
                logger.critical("an effect decided outside an input's turn was dropped", metadata: .journal([.error: "\(effect)"]))
            }
        }
    }
}
