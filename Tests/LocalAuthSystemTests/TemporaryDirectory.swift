// A fresh directory per test under /tmp, removed afterwards.
import Glibc
import LocalAuthSystem
import XCTest

func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/localauth-system-test-XXXXXX".utf8CString)
    guard let path = mkdtemp(&template) else { throw SystemError.current("mkdtemp") }
    return String(cString: path)
}

func removeTree(_ path: String) {
    guard let names = try? Directory.entries(path) else {
        _ = unlink(path)
        return
    }
    for name in names {
        let child = path + "/" + name
        var info = stat()
        if lstat(child, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            removeTree(child)
        } else {
            _ = unlink(child)
        }
    }
    _ = rmdir(path)
}
