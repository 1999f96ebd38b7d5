import ArgumentParser
import RelinkClient

/// The restore identifier a command acts on, checked by the model's rule.
struct IdentifierArgument: ParsableArguments {
    @Argument(help: "The restore identifier.") var identifier: String

    /// Checks the identifier before relinkd is called.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    mutating func validate() throws {
        try ArgumentCheck.run { [identifier] () throws(RelinkClientError) in
            try RelinkArguments.checkIdentifier(identifier)
        }
    }
}
