public import RelinkModel

/// Write requests the fake's peripherals received, and writes held on
/// their way (a peripheral that has not answered yet), for transfer tests.
struct FakeWriteLog: Sendable {
    /// Values received with response, per characteristic, in order.
    var requests: [FakeBlueZ.Key: [[UInt8]]] = [:]
    /// Writes that still pass before the next ones are held; nil: none held.
    var passing: Int?
    /// Writes held until ``FakeBlueZ/releaseWrites()``.
    var held: [CheckedContinuation<Void, Never>] = []
    /// The longest value a write may carry (``FakeBlueZ/refuseWrites(longerThan:)``).
    var longest: Int?
}

/// Transfers (relinkd's chunked writes): what a peripheral received with
/// response, and writes held in flight, so that a test can drop the link
/// (or stop relinkd) while a chunk waits for its answer.
extension FakeBlueZ {
    /// The values the peripheral received with response on a
    /// characteristic since the last call, in order.
    public func takeRequests(_ address: BluetoothAddress, service: BluetoothUUID, characteristic: BluetoothUUID) -> [[UInt8]] {
        let key = Key(address: address, service: service, characteristic: characteristic)
        defer { writeLog.requests[key] = nil }
        return writeLog.requests[key] ?? []
    }

    /// From now on `count` more writes (of any characteristic, either
    /// type) are answered; the ones after wait, unanswered and not yet
    /// received, until ``releaseWrites()``.
    public func holdWrites(after count: Int) {
        writeLog.passing = count
    }

    /// From now on a write longer than `bytes` is refused as the
    /// peripheral's ATT 0x0D, the way bluetoothd 5.66 reports it
    /// (`InvalidArguments: Invalid Length`); nil takes any length again.
    public func refuseWrites(longerThan bytes: Int?) {
        writeLog.longest = bytes
    }

    /// How many writes wait unanswered.
    public var heldWrites: Int { writeLog.held.count }

    /// Lets every held write go on (each then finds the link as it is now:
    /// one whose link went down fails `Not connected`) and holds no more.
    public func releaseWrites() {
        writeLog.passing = nil
        let held = writeLog.held
        writeLog.held = []
        for write in held { write.resume() }
    }

    /// Waits here when writes are held (``holdWrites(after:)``). Returns
    /// false for a write whose caller was cancelled (relinkd stopping, as
    /// when killed): the peripheral receives it, and its answer never
    /// reaches relinkd (the write then fails `NoReply`).
    func passWriteGate() async -> Bool {
        guard let passing = writeLog.passing else { return true }
        if passing > 0 {
            writeLog.passing = passing - 1
            return true
        }
        guard !Task.isCancelled else { return false }
        await withTaskCancellationHandler {
            await withCheckedContinuation { writeLog.held.append($0) }
        } onCancel: {
            Task { await self.resumeHeld() }
        }
        return !Task.isCancelled
    }

    /// Lets the held writes go on, holding later ones still.
    private func resumeHeld() {
        let held = writeLog.held
        writeLog.held = []
        for write in held { write.resume() }
    }
}
