// Fuzz target for the wire codec (PROTOCOL.md Framing); see FuzzProperty.swift
// for who calls it.
//
// Input: arbitrary bytes, as a hostile client would send them. The first byte
// picks chunk sizes for the LineSplitter, so that lines split across reads are
// exercised too. Properties checked (a violation traps = a libFuzzer crash):
//   - LineSplitter never yields a line longer than its limit and never
//     anything after lineTooLong;
//   - Request.parse and Response.parse never crash, whatever the bytes;
//   - whatever parses re-serialises (LineWriter) to a line that parses to the
//     same value (the daemon's writer and parser agree);
//   - one RequestScanner reused for every line (as the daemon keeps one)
//     agrees with a fresh parse, and its ranges stay inside the line;
//   - the server's form (`requestWithSecretsApart`, S-50) is the same request
//     with the values of the secret keys in SecretBytes, the same bytes;
//   - a line CanEvaluateLine takes parses to can-evaluate with exactly its
//     tag, ctx and policy, the policy one of the short names with the
//     number it gives (the daemon answers such lines without the scanner).
import LocalAuthProtocol

public func protocolFuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard let first = input.first else { return 0 }
    let body = UnsafeBufferPointer(rebasing: input[1...])
    let chunk = Int(first % 17) + 1

    var splitter = LineSplitter(maximumLineLength: 512)
    var offset = 0
    var failed = false
    while offset < body.count {
        let end = min(offset + chunk, body.count)
        splitter.append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: body[offset..<end])))
        offset = end
        while let event = splitter.next() {
            require(!failed, "LineSplitter yielded a line after lineTooLong")
            switch event {
            case .lineTooLong:
                failed = true
            case .line(let line):
                require(line.count < 512, "a line longer than the limit came out")
                checkLine(Array(line))
            }
        }
    }
    // The whole input as one line, too.
    checkLine(Array(body))
    return 0
}

/// PROTOCOL.md's short policy spellings (the only ones CanEvaluateLine
/// takes) and Apple's numbers for them.
private let shortPolicyNames = [
    "1": 1, "2": 2, "3": 3, "4": 4, "5": 5,
    "biometrics": 1, "owner": 2, "companion": 3, "biometrics-or-companion": 4, "wrist": 5,
]

/// The server's form of a request agrees with the String form: the secret
/// keys' values apart (their bytes the String's), everything else equal.
private func checkSecretsApart(_ server: Request, _ strings: Request) {
    require(server.tag == strings.tag && server.verb == strings.verb
                && server.arguments.map(\.key) == strings.arguments.map(\.key),
            "the server's form changed the tag, verb or keys")
    var held: [String] = []
    for (apart, given) in zip(server.arguments, strings.arguments) {
        if Verb.secretKeys.contains(given.key) {
            held.append(given.key)
            require(apart.value.isEmpty && server.secrets.value(for: given.key)?.copy() == Array(given.value.utf8),
                    "a secret's bytes differ from its String, or a String of it was kept")
        } else {
            require(apart.value == given.value, "the server's form changed a value that is no secret")
        }
    }
    require(server.secrets.keys == held, "the secrets held apart are not the secret keys")
}

/// The daemon's way: one scanner for every line of a connection.
nonisolated(unsafe) private var reusedScanner = RequestScanner()

private func checkLine(_ bytes: [UInt8]) {
    bytes.withUnsafeBufferPointer { line in
        let failure = reusedScanner.scan(line)
        switch (Request.parse(line), failure) {
        case (.failure(let fresh), let reused?):
            require(fresh == reused, "a reused scanner failed differently")
            require(CanEvaluateLine(line) == nil, "CanEvaluateLine took a line the scanner refuses")
        case (.request(let fresh), nil):
            require(reusedScanner.request == fresh, "a reused scanner parsed differently")
            checkSecretsApart(reusedScanner.requestWithSecretsApart, fresh)
            let ranges = [reusedScanner.tag, reusedScanner.verb]
                + reusedScanner.arguments.flatMap { [$0.key, $0.value] }
            require(ranges.allSatisfy { $0.lowerBound >= 0 && $0.upperBound <= line.count }, "a range outside the line")
            if let usual = CanEvaluateLine(line) {
                let text = { (bytes: UnsafeBufferPointer<UInt8>) in String(decoding: bytes, as: UTF8.self) }
                require(fresh == Request(tag: text(usual.tag), verb: "can-evaluate",
                                              arguments: ["ctx": text(usual.ctx), "policy": text(usual.policy)])
                             && reusedScanner.arguments.count == 2
                             && !reusedScanner.arguments[0].escaped && !reusedScanner.arguments[1].escaped,
                             "CanEvaluateLine took a line the scanner reads otherwise")
                require(shortPolicyNames[text(usual.policy)] == usual.policyNumber,
                        "CanEvaluateLine gave a policy number the name does not have")
            }
        default:
            require(false, "a reused scanner and a fresh parse disagree on whether the line parses")
        }
    }
    switch Request.parse(bytes) {
    case .failure(let failure):
        if let tag = failure.tag { require(!tag.isEmpty, "failure with an empty tag") }
    case .request(let request):
        var writer = LineWriter()
        writer.append(request)
        var line = writer.bytes
        require(line.last == UInt8(ascii: "\n"), "LineWriter did not end the line")
        line.removeLast()
        guard case .request(let again) = Request.parse(line) else {
            return require(false, "re-serialised request does not parse: \(String(decoding: line, as: UTF8.self))")
        }
        require(again == request, "request round trip changed it")
    }
    if let response = try? Response.parse(bytes) {
        var writer = LineWriter()
        writer.append(response)
        var line = writer.bytes
        line.removeLast()
        guard let again = try? Response.parse(line) else {
            return require(false, "re-serialised response does not parse: \(String(decoding: line, as: UTF8.self))")
        }
        require(again == response, "response round trip changed it")
    }
}
