// Which files make up the configuration, in the order they are applied,
// the way systemd reads its own drop-ins (systemd.unit(5), "drop-in"):
//
//   - the main file, /etc/localauthd/localauthd.conf, first;
//   - then every `*.conf` in /etc/localauthd/localauthd.conf.d/,
//     /run/localauthd/localauthd.conf.d/ and
//     /usr/lib/localauthd/localauthd.conf.d/, sorted by file name
//     regardless of the directory, so a later name wins over an earlier one;
//   - a name found in several directories is read from the first of them
//     only: /etc overrides /run, which overrides /usr/lib. A drop-in in /etc
//     that is empty or a link to /dev/null therefore masks the packaged one.
//
// Pure: the caller lists the directories (and reads the files).

public enum ConfigurationFiles {
    /// The paths to read, in order. `listing(directory)` gives a
    /// directory's entry names, or nil when it does not exist.
    public static func paths(
        mainFile: String? = ConfigurationParser.mainFile,
        dropInDirectories: [String] = ConfigurationParser.dropInDirectories,
        listing: (String) -> [String]?
    ) -> [String] {
        var chosen: [String: String] = [:]
        for directory in dropInDirectories.reversed() {
            for name in ConfigurationParser.dropInOrder(listing(directory) ?? []) {
                chosen[name] = directory + "/" + name
            }
        }
        let names = ConfigurationParser.dropInOrder(Array(chosen.keys))
        return (mainFile.map { [$0] } ?? []) + names.map { chosen[$0]! }
    }
}
