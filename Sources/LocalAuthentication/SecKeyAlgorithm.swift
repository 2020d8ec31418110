// Apple's `SecKeyAlgorithm` and `SecKeyKeyExchangeParameter` (the Security
// framework's, which Linux lacks), for LAPrivateKey and LAPublicKey: every
// public constant of SecKey.h under its Swift name, with Apple's raw values
// (Security's SecKeyAdaptors defines them), so code written for Apple's
// keys compiles unchanged. A right's key is P-256: it offers the EC
// algorithms PROTOCOL.md v1.3 lists (`canSign(using:)` and the rest say
// which); the RSA names exist only so that code naming them compiles.
// Apple's raw value is a CFString; here it is a String.

public struct SecKeyAlgorithm: Hashable, Equatable, RawRepresentable, Sendable {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let rsaSignatureRaw = SecKeyAlgorithm(rawValue: "algid:sign:RSA:raw")
    public static let rsaSignatureDigestPKCS1v15Raw = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15")
    public static let rsaSignatureDigestPKCS1v15SHA1 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA1")
    public static let rsaSignatureDigestPKCS1v15SHA224 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA224")
    public static let rsaSignatureDigestPKCS1v15SHA256 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA256")
    public static let rsaSignatureDigestPKCS1v15SHA384 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA384")
    public static let rsaSignatureDigestPKCS1v15SHA512 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA512")
    public static let rsaSignatureMessagePKCS1v15SHA1 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA1")
    public static let rsaSignatureMessagePKCS1v15SHA224 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA224")
    public static let rsaSignatureMessagePKCS1v15SHA256 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256")
    public static let rsaSignatureMessagePKCS1v15SHA384 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA384")
    public static let rsaSignatureMessagePKCS1v15SHA512 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA512")
    public static let rsaSignatureDigestPSSSHA1 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PSS:SHA1:SHA1:20")
    public static let rsaSignatureDigestPSSSHA224 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PSS:SHA224:SHA224:24")
    public static let rsaSignatureDigestPSSSHA256 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PSS:SHA256:SHA256:32")
    public static let rsaSignatureDigestPSSSHA384 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PSS:SHA384:SHA384:48")
    public static let rsaSignatureDigestPSSSHA512 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:digest-PSS:SHA512:SHA512:64")
    public static let rsaSignatureMessagePSSSHA1 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PSS:SHA1:SHA1:20")
    public static let rsaSignatureMessagePSSSHA224 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PSS:SHA224:SHA224:24")
    public static let rsaSignatureMessagePSSSHA256 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PSS:SHA256:SHA256:32")
    public static let rsaSignatureMessagePSSSHA384 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PSS:SHA384:SHA384:48")
    public static let rsaSignatureMessagePSSSHA512 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PSS:SHA512:SHA512:64")

    public static let ecdsaSignatureRFC4754 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:RFC4754")
    public static let ecdsaSignatureDigestX962 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962")
    public static let ecdsaSignatureDigestX962SHA1 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA1")
    public static let ecdsaSignatureDigestX962SHA224 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA224")
    public static let ecdsaSignatureDigestX962SHA256 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA256")
    public static let ecdsaSignatureDigestX962SHA384 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA384")
    public static let ecdsaSignatureDigestX962SHA512 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA512")
    public static let ecdsaSignatureMessageX962SHA1 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA1")
    public static let ecdsaSignatureMessageX962SHA224 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA224")
    public static let ecdsaSignatureMessageX962SHA256 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
    public static let ecdsaSignatureMessageX962SHA384 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA384")
    public static let ecdsaSignatureMessageX962SHA512 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA512")

    public static let rsaEncryptionRaw = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:raw")
    public static let rsaEncryptionPKCS1 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:PKCS1")
    public static let rsaEncryptionOAEPSHA1 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA1")
    public static let rsaEncryptionOAEPSHA224 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA224")
    public static let rsaEncryptionOAEPSHA256 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA256")
    public static let rsaEncryptionOAEPSHA384 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA384")
    public static let rsaEncryptionOAEPSHA512 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA512")
    public static let rsaEncryptionOAEPSHA1AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA1:AESGCM")
    public static let rsaEncryptionOAEPSHA224AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA224:AESGCM")
    public static let rsaEncryptionOAEPSHA256AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA256:AESGCM")
    public static let rsaEncryptionOAEPSHA384AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA384:AESGCM")
    public static let rsaEncryptionOAEPSHA512AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA512:AESGCM")

    public static let eciesEncryptionStandardX963SHA1AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA1:AESGCM")
    public static let eciesEncryptionStandardX963SHA224AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM")
    public static let eciesEncryptionStandardX963SHA256AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM")
    public static let eciesEncryptionStandardX963SHA384AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM")
    public static let eciesEncryptionStandardX963SHA512AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM")
    public static let eciesEncryptionCofactorX963SHA1AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA1:AESGCM")
    public static let eciesEncryptionCofactorX963SHA224AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM")
    public static let eciesEncryptionCofactorX963SHA256AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM")
    public static let eciesEncryptionCofactorX963SHA384AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM")
    public static let eciesEncryptionCofactorX963SHA512AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM")
    public static let eciesEncryptionStandardVariableIVX963SHA224AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM-KDFIV")
    public static let eciesEncryptionStandardVariableIVX963SHA256AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM-KDFIV")
    public static let eciesEncryptionStandardVariableIVX963SHA384AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM-KDFIV")
    public static let eciesEncryptionStandardVariableIVX963SHA512AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM-KDFIV")
    public static let eciesEncryptionCofactorVariableIVX963SHA224AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM-KDFIV")
    public static let eciesEncryptionCofactorVariableIVX963SHA256AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")
    public static let eciesEncryptionCofactorVariableIVX963SHA384AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM-KDFIV")
    public static let eciesEncryptionCofactorVariableIVX963SHA512AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM-KDFIV")

    public static let ecdhKeyExchangeStandard = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDH")
    public static let ecdhKeyExchangeStandardX963SHA1 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDH:KDFX963:SHA1")
    public static let ecdhKeyExchangeStandardX963SHA224 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDH:KDFX963:SHA224")
    public static let ecdhKeyExchangeStandardX963SHA256 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDH:KDFX963:SHA256")
    public static let ecdhKeyExchangeStandardX963SHA384 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDH:KDFX963:SHA384")
    public static let ecdhKeyExchangeStandardX963SHA512 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDH:KDFX963:SHA512")
    public static let ecdhKeyExchangeCofactor = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDHC")
    public static let ecdhKeyExchangeCofactorX963SHA1 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDHC:KDFX963:SHA1")
    public static let ecdhKeyExchangeCofactorX963SHA224 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDHC:KDFX963:SHA224")
    public static let ecdhKeyExchangeCofactorX963SHA256 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDHC:KDFX963:SHA256")
    public static let ecdhKeyExchangeCofactorX963SHA384 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDHC:KDFX963:SHA384")
    public static let ecdhKeyExchangeCofactorX963SHA512 = SecKeyAlgorithm(rawValue: "algid:keyexchange:ECDHC:KDFX963:SHA512")
}

/// Apple's keys of `exchangeKeys(publicKey:algorithm:parameters:)`'s dictionary.
public struct SecKeyKeyExchangeParameter: Hashable, Equatable, RawRepresentable, Sendable {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// How many bytes the X9.63 KDF of a `…X963SHAn` exchange gives (an integer).
    public static let requestedSize = SecKeyKeyExchangeParameter(rawValue: "requestedSize")
    /// The KDF's SharedInfo (Data).
    public static let sharedInfo = SecKeyKeyExchangeParameter(rawValue: "sharedInfo")
}
