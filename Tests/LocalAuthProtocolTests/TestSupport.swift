// Shared by the protocol tests: small conveniences over parse results (the
// seeded generator is LocalAuthTestSupport's).

@testable import LocalAuthProtocol

extension RequestParseResult {
    var request: Request? {
        if case .request(let r) = self { return r }
        return nil
    }

    var failure: RequestFailure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}

func parseBytes(_ bytes: [UInt8]) -> RequestParseResult { Request.parse(bytes) }
