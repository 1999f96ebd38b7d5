@testable import DBus
import RelinkModel

/// Random D-Bus types and values (no fds, no NaN), nested up to `depth`.
struct RandomValues {
    var rng: SplitMix64

    static let basics: [DBusType] = [.byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath, .signature]

    mutating func type(depth: Int) -> DBusType {
        let pick = Int.random(in: 0..<(depth > 0 ? 17 : 12), using: &rng)
        switch pick {
        case 0..<12: return Self.basics[pick]
        case 12, 13: return .array(type(depth: depth - 1))
        case 14: return .dictionary(key: Self.basics.randomElement(using: &rng) ?? .string, value: type(depth: depth - 1))
        case 15: return .structure((0..<Int.random(in: 1...4, using: &rng)).map { _ in type(depth: depth - 1) })
        default: return .variant
        }
    }

    mutating func string() -> String {
        let alphabet = Array("abcXYZ019 _-é€😀'\"<>&\n")
        return String((0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
    }

    mutating func value(_ t: DBusType, depth: Int) -> DBusValue {
        switch t {
        case .byte: return .byte(.random(in: .min ... .max, using: &rng))
        case .boolean: return .boolean(.random(using: &rng))
        case .int16: return .int16(.random(in: .min ... .max, using: &rng))
        case .uint16: return .uint16(.random(in: .min ... .max, using: &rng))
        case .int32: return .int32(.random(in: .min ... .max, using: &rng))
        case .uint32: return .uint32(.random(in: .min ... .max, using: &rng))
        case .int64: return .int64(.random(in: .min ... .max, using: &rng))
        case .uint64: return .uint64(.random(in: .min ... .max, using: &rng))
        case .double:
            let choices: [Double] = [0, -0.0, 1.5, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude]
            return .double(Bool.random(using: &rng) ? choices.randomElement(using: &rng) ?? 0 : .random(in: -1e300...1e300, using: &rng))
        case .string: return .string(string())
        case .objectPath:
            let n = Int.random(in: 0...3, using: &rng)
            return .objectPath(ObjectPath(trusted: n == 0 ? "/" : (0..<n).map { i in "/e\(i)_\(Int.random(in: 0...99, using: &rng))" }.joined()))
        case .signature:
            var sub = self
            let types = (0..<Int.random(in: 0...3, using: &rng)).map { _ in sub.type(depth: 2) }
            rng = sub.rng
            return .signature(Signature(trusted: types.map(\.signature).joined(), types: types))
        case .unixFD: fatalError("not generated")
        case .variant:
            let inner = type(depth: max(depth - 1, 0))
            return .variant(value(inner, depth: depth - 1))
        case .array(let e):
            return .array(e, (0..<Int.random(in: 0...4, using: &rng)).map { _ in value(e, depth: depth - 1) })
        case .dictionary(let k, let v):
            return .dictionary(key: k, value: v, (0..<Int.random(in: 0...4, using: &rng)).map { _ in .init(value(k, depth: 0), value(v, depth: depth - 1)) })
        case .structure(let ms):
            return .structure(ms.map { value($0, depth: depth - 1) })
        }
    }
}
