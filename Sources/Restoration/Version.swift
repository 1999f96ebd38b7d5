/// The version of relink, shared by relinkd, relinkctl and the client library.
public enum RelinkVersion {
    public static let string = "0.1.0"
}
