public import RelinkModel
/// What the already-connected strategy does with several candidates.
///
/// A candidate at the intent's stored address always wins. Otherwise the
/// candidates that meet the intent's ``MatchRule`` are kept; with exactly one
/// left it is adopted. With several left:
public enum CandidateChoice: String, Sendable, Hashable, Codable {
    /// adopt none (a wrong lock is worse than a scan) and move on to the next
    /// strategy, logging the ambiguity. The default.
    case requireUnique
    /// adopt the first in address order (deterministic).
    case lowestAddress

    /// Picks per the rule above; nil when none is chosen.
    public func choose(from candidates: [ConnectedCandidate], knownAddress: BluetoothAddress?, match: MatchRule) -> CandidateOutcome {
        if let knownAddress, let exact = candidates.first(where: { $0.address == knownAddress }) {
            return .chosen(exact)
        }
        let matching = candidates.filter { match.matches($0) }.sorted { $0.address < $1.address }
        switch (matching.count, self) {
        case (0, _): return .none
        case (1, _), (_, .lowestAddress): return .chosen(matching[0])
        case (let count, .requireUnique): return .ambiguous(count)
        }
    }
}

/// The result of ``CandidateChoice/choose(from:knownAddress:match:)``.
public enum CandidateOutcome: Sendable, Hashable {
    case chosen(ConnectedCandidate)
    case none
    case ambiguous(Int)
}
