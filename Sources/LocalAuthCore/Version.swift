// The release version, one value for localauthd, localauthctl and the
// package (debian/changelog must name the same; scripts/check-package
// compares them).

public enum LocalAuthVersion {
    public static let string = "0.1.0"
}
