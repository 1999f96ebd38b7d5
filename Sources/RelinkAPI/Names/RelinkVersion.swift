/// The version of relink, shared by relinkd, relinkctl and the client library.
public enum RelinkVersion {
    /// The version text, e.g. `0.1.0`.
    public static let string = "0.1.0"
}
