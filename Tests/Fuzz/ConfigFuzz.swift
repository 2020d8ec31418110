// Fuzz target for the configuration parser (FuzzProperty.swift says who
// calls it). Input: a config file's bytes (the
// daemon decodes them as UTF-8 with replacement, as Daemon.loadConfiguration
// does). Property: parse never crashes; it either throws a ConfigurationError
// or returns a configuration; parsing the same text twice gives the same
// answer, and two drop-ins (the text applied twice) parse as one does.
import LocalAuthConfig

public func configFuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let once: DaemonConfiguration?
    do {
        once = try ConfigurationParser.parse([(fileName: "fuzz.conf", contents: text)])
    } catch {
        once = nil
        require(!error.description.isEmpty, "a configuration error without a message")
    }
    let again = try? ConfigurationParser.parse([(fileName: "fuzz.conf", contents: text)])
    require(once == again, "parse is not deterministic")
    if let once {
        _ = once.rules
        // Later files win; the same file twice must land on the same values.
        let twice = try? ConfigurationParser.parse([(fileName: "a.conf", contents: text), (fileName: "b.conf", contents: text)])
        require(twice != nil, "a file that parses alone fails when applied twice")
    }
    return 0
}
