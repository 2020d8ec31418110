// Known answers for the rights' keys, each from outside this project:
// - RFC 6979 A.2.5: the P-256 key (x, Ux, Uy) and its deterministic
//   signature of "sample" with SHA-256 (r, s), DER-encoded here.
// - NIST CAVS ansx963_2001.rsp, [SHA-256]: X9.63 KDF vectors.
// - github.com/jedda/ECIES, ecies_test.go (TestExternalDecryptSuccess):
//   ciphertexts made by Apple's Security.framework (SecKeyCreateEncryptedData,
//   .eciesEncryptionCofactorVariableIVX963SHA256AESGCM and
//   .eciesEncryptionCofactorX963SHA224AESGCM) for P-256 keys given as SEC 1
//   DER, whose plaintext is the vector's name.
// - Encryption and ECDH answers for the RFC 6979 key and a fixed ephemeral
//   scalar, computed independently with pyca/cryptography 48 (X963KDF,
//   AESGCM, ECDH) by the script in the comment below them.
import Foundation

enum Vectors {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    static let rfc6979Scalar = hex("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721")
    static let rfc6979Public = hex("04"
        + "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"
        + "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299")
    /// DER of (r, s) = (efd48b2a…3716, f7cb1c94…cda8), RFC 6979 A.2.5, SHA-256, "sample".
    static let rfc6979SampleSignature = hex("3046022100efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
        + "022100f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8")

    /// (Z, SharedInfo, key data), CAVS [SHA-256].
    static let x963 = [
        (hex("96c05619d56c328ab95fe84b18264b08725b85e33fd34f08"), [UInt8](), hex("443024c3dae66b95e6f5670601558f71")),
        (hex("22518b10e70f2a3f243810ae3254139efbee04aa57c7af7d"), hex("75eef81aa3041e33b80971203d2c0c52"),
         hex("c498af77161cc59f2962b9a713e2b215152d139766ce34a776df11866a69bf2e52a13d9c7c6fc878c50c5ea0bc7b00e0"
             + "da2447cfd874f6cf92f30d0097111485500c90c3af8b487872d04685d14c8d1dc8d7fa08beb0ce0ababc11f0bd4962"
             + "69142d43525a78e5bc79a17f59676a5706dc54d54d4d1f0bd7e386128ec26afc21")),
    ]

    /// Apple's ciphertexts: (SEC 1 DER private key, ciphertext, digest, variable IV, plaintext).
    static let apple = [
        ("MHcCAQEEIHGhxnpu3kG/nW5ozDZJ+TTFQvL6MynCcQWD6jHV4p0UoAoGCCqGSM49AwEHoUQDQgAEzgFYw3Rqc72IIYHV7JH6M245n/nLnxyre1A7sc5nOt31ZyfJQLXGs4dY0cggne28ueXHID5lKz1JNChY49NHYg==",
         "BI6sBCGyf916GQSV3DHOvmFxOmzbV9pq08wcOdKaepP2/Qtepj9M71dYkzXf6OqIstDyyVIxfnAMfUpxZzoCHDbalYRzzwhqHwg7K6RNl1F29PVdLNtJH498yJSfloW/",
         "sha256", true, "P256-SHA256-VIV"),
        ("MHcCAQEEIJyzfcyptwjYkgdcFhfJlztLPmcfyzyCFs7NoQuCbAAhoAoGCCqGSM49AwEHoUQDQgAE7WttwmG8qki5bU2utMaugBWbWD9Jx/UPzgnGxthgHteyqPGofBjBwPZTbxj+lrIGNyHRdbOkSusD7051WG8nmg==",
         "BPIMheQOrz0l9wEjcOHQEQ16D9Go8Sm8bEM3LAgMEHUf/eHy3u0oVlfh2po9ocPCuKG2bQ28wlsQ0N6SNJ3O3auS/QeoUogLVcJ3+R1OOeixEJyqeUkn6zB8LcqoZ+Y2",
         "sha224", false, "P256-SHA224-0IV"),
    ]

    /// SEC 1 DER of a P-256 key with its public key (`openssl ecparam -genkey -noout` form):
    /// 30 77 02 01 01 04 20 <scalar> a0 0a 06 08 <prime256v1> a1 44 03 42 00 <public key>.
    static func sec1(_ base64: String) -> (scalar: [UInt8], publicKey: [UInt8]) {
        let der = [UInt8](Data(base64Encoded: base64)!)
        precondition(der.count == 121 && der[5] == 0x04 && der[6] == 0x20 && der[54] == 0x42 && der[55] == 0)
        return (Array(der[7..<39]), Array(der[56..<121]))
    }

    // from cryptography.hazmat.primitives.asymmetric import ec; ... (pyca/cryptography 48)
    // recipient = ec.derive_private_key(int(rfc6979Scalar), SECP256R1())
    // e = ec.derive_private_key(int(ephemeralScalar), SECP256R1()); E = e.public_key() X9.62 uncompressed
    // Z = e.exchange(ec.ECDH(), recipient.public_key())
    // km = X963KDF(SHA256(), 32 or 16, E).derive(Z); key, iv = km[:16], km[16:] or bytes(16)
    // E + AESGCM(key).encrypt(iv, plaintext, None)
    static let ephemeralScalar = hex("9cb37dcca9b708d892075c1617c9973b4b3e671fcb3c8216cecda10b826c0021")
    static let ephemeralPublic = hex("04ed6b6dc261bcaa48b96d4daeb4c6ae80159b583f49c7f50fce09c6c6d8601ed7"
        + "b2a8f1a87c18c1c0f6536f18fe96b2063721d175b3a44aeb03ef4e75586f279a")
    static let sharedSecret = hex("c6084b5004c4dbd50b095edc945ff7cb2c3230f4c30d615748ad5a12ff17d337")
    static let plaintext = Array("localauthd: a known answer for Apple's ECIES".utf8)
    static let variableIVCiphertext = ephemeralPublic + hex(
        "d3bfee98eff75f54d332997e531fac0fd53ed4f8c51a05886cbacf174116878243567bab5cc73495cde462bc5f4c34b8370d7ebac72015fd66b4c9db")
    static let zeroIVCiphertext = ephemeralPublic + hex(
        "602f9b421000ed16651d5d3fedae2a80dc9df07c96f5b440b200ae6fe248f6f0c004a2e9782e718ca9cd2b1646ac9d9cd503c638dcb86b4881340b14")
}
