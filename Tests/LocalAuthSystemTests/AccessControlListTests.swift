// AccessControlList: the bytes are the kernel's (it accepts them, and the
// mode's group bits become the mask), a named group reads only what the mask
// lets it, a default ACL is inherited by new files, and a removed ACL leaves
// the plain mode. Bad attribute bytes are refused, not half-read.
import Glibc
import LocalAuthSystem
import LocalAuthTestSupport
import XCTest

final class AccessControlListTests: XCTestCase {
    func testEncodingRoundTripsAndOrdersEntries() throws {
        let acl = AccessControlList(owner: 7, owningGroup: 5, users: [1001: 4], groups: [100: 5, 50: 1], other: 0)
        XCTAssertEqual(acl.mask, 5, "the mask is the group class's union")
        let bytes = acl.encoded()
        XCTAssertEqual(bytes.count, 4 + 7 * 8)
        XCTAssertEqual(Array(bytes[0..<4]), [2, 0, 0, 0], "version 2, little-endian")
        // Tags in the kernel's order: user_obj, user, group_obj, group (by id), mask, other.
        let tags = stride(from: 4, to: bytes.count, by: 8).map { UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8 }
        XCTAssertEqual(tags, [0x01, 0x02, 0x04, 0x08, 0x08, 0x10, 0x20])
        XCTAssertEqual(bytes[4 + 3 * 8 + 4], 50, "named groups sorted by gid")
        XCTAssertEqual(AccessControlList(decoding: bytes), acl)
        XCTAssertNil(AccessControlList(owner: 6, owningGroup: 4, groups: [:], other: 4).mask)
    }

    func testMalformedBytesAreRefused() {
        let good = AccessControlList(owner: 7, owningGroup: 0, groups: [50: 1], other: 0).encoded()
        XCTAssertNil(AccessControlList(decoding: []))
        XCTAssertNil(AccessControlList(decoding: Array(good.dropLast())), "a torn entry")
        XCTAssertNil(AccessControlList(decoding: [1, 0, 0, 0] + good.dropFirst(4)), "version 1")
        var unknownTag = good
        unknownTag[4] = 0x40
        XCTAssertNil(AccessControlList(decoding: unknownTag))
        XCTAssertNil(AccessControlList(decoding: Array(good[0..<12])), "no group_obj or other entry")
    }

    func testTheMaskCapsNamedGroups() {
        var acl = AccessControlList(owner: 6, owningGroup: 4, groups: [50: 5], other: 0)
        XCTAssertEqual(acl.effective(group: 50), 5)
        acl.mask = 4
        XCTAssertEqual(acl.effective(group: 50), 4)
        XCTAssertEqual(acl.effective(group: 51), 0)
    }

    func testTheKernelTakesTheACLAndTheModeFollowsIt() throws {
        let scratch = TemporaryDirectory()
        let directory = scratch.path
        let fd = try FileDescriptor.open(directory, .readOnly, options: .directory)
        defer { try? fd.close() }
        XCTAssertNil(try fd.acl(.access), "a fresh directory has none")
        XCTAssertFalse(try fd.removeACL(.access))

        let grant = AccessControlList(owner: 7, owningGroup: 5, groups: [50: 5], other: 0)
        try fd.setACL(grant, .access)
        try fd.setACL(grant, .default)
        XCTAssertEqual(try File.permissions(directory), 0o750)
        XCTAssertEqual(try AccessControlList.read(directory, .access), grant)
        XCTAssertEqual(try fd.acl(.default), grant)

        // A file created 0640 inherits the named group, capped to read by its mode.
        let file = directory + "/segment"
        let created = try FileDescriptor.open(file, .writeOnly, options: [.create], permissions: 0o640)
        try created.close()
        let inherited = try XCTUnwrap(try AccessControlList.read(file, .access))
        XCTAssertEqual(inherited.effective(group: 50), 4)
        XCTAssertEqual(try File.permissions(file), 0o640)
        // chmod 0600 takes the group class away, named groups included.
        try File.chmod(file, 0o600)
        XCTAssertEqual(try AccessControlList.read(file, .access)?.effective(group: 50), 0)

        XCTAssertTrue(try fd.removeACL(.access))
        XCTAssertTrue(try fd.removeACL(.default))
        XCTAssertNil(try AccessControlList.read(directory, .access))
        XCTAssertEqual(try File.permissions(directory), 0o750, "the mask's bits stay as the group's")
        XCTAssertThrowsError(try AccessControlList.read(directory + "/missing", .access)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, ENOENT)
        }
    }
}
