public import RelinkModel
/// What a committed mutation did to an identifier's outbox, so that a
/// caller can mirror the outbox without reading it back.
public enum OutboxEffect: Hashable, Sendable {
    /// An event was stored with this sequence number.
    case appended(RestoreIdentifier, sequence: Int64)
    /// The bound dropped `count` of the oldest events, `range` their lowest
    /// and highest sequence numbers; `first` is the lowest stored one left.
    case dropped(RestoreIdentifier, count: Int64, range: ClosedRange<Int64>, first: Int64?)
    /// Events up to `through` were acknowledged; `deleted` of them were
    /// stored; `first` is the lowest stored one left.
    case acknowledged(RestoreIdentifier, through: Int64, deleted: Int, first: Int64?)
    /// `count` events that were never stored are now counted as dropped
    /// (``StoreMutation/countUnstoredEvents(_:count:range:)``); whoever
    /// submitted that mutation counted them already.
    case unstoredCounted(RestoreIdentifier, count: Int64)
}

extension OutboxEffect {
    /// The identifier whose outbox changed.
    public var identifier: RestoreIdentifier {
        switch self {
        case .appended(let id, _), .dropped(let id, _, _, _), .acknowledged(let id, _, _, _), .unstoredCounted(let id, _): id
        }
    }
}
