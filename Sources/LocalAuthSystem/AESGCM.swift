// AES-256-GCM through OpenSSL's EVP interface, for LARight's secrets at
// rest. A sealed box is nonce (12 random bytes) || ciphertext || tag (16
// bytes); the additional data binds a box to what it belongs to (the
// caller's uid and identifier), so a box copied to another right does not
// open. `open` returns nil for any box that does not authenticate: a wrong
// key, a changed byte, a box moved to another right.
import COpenSSL
import Glibc

public enum AESGCM {
    public static let keySize = 32
    public static let nonceSize = 12
    public static let tagSize = 16

    public static func seal(_ plaintext: [UInt8], key: [UInt8], additionalData: [UInt8]) -> [UInt8] {
        precondition(key.count == keySize, "AES-256 needs a 32-byte key")
        let nonce = SecureRandom.bytes(nonceSize)
        guard let context = EVP_CIPHER_CTX_new() else { fatalError("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: tagSize)
        var length: Int32 = 0
        var total: Int32 = 0
        var ok = EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceSize), nil) == 1
            && EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1
        if ok, !additionalData.isEmpty {
            ok = EVP_EncryptUpdate(context, nil, &length, additionalData, Int32(additionalData.count)) == 1
        }
        if ok, !plaintext.isEmpty {
            ok = EVP_EncryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1
            total = length
        }
        if ok {
            ok = ciphertext.withUnsafeMutableBufferPointer { buffer in
                EVP_EncryptFinal_ex(context, buffer.baseAddress! + Int(total), &length) == 1
            }
            total += length
        }
        ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), &tag) == 1
        precondition(ok, "AES-256-GCM encryption failed")
        return nonce + ciphertext[..<Int(total)] + tag
    }

    /// The plaintext, or nil when the box does not authenticate. The caller
    /// wipes the plaintext once used (SecretMemory.wipe).
    public static func open(_ box: [UInt8], key: [UInt8], additionalData: [UInt8]) -> [UInt8]? {
        precondition(key.count == keySize, "AES-256 needs a 32-byte key")
        guard box.count >= nonceSize + tagSize else { return nil }
        let nonce = Array(box[..<nonceSize])
        let ciphertext = Array(box[nonceSize..<(box.count - tagSize)])
        var tag = Array(box[(box.count - tagSize)...])
        guard let context = EVP_CIPHER_CTX_new() else { fatalError("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var length: Int32 = 0
        var total: Int32 = 0
        var ok = EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceSize), nil) == 1
            && EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1
        if ok, !additionalData.isEmpty {
            ok = EVP_DecryptUpdate(context, nil, &length, additionalData, Int32(additionalData.count)) == 1
        }
        if ok, !ciphertext.isEmpty {
            ok = EVP_DecryptUpdate(context, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1
            total = length
        }
        ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1
        if ok {
            ok = plaintext.withUnsafeMutableBufferPointer { buffer in
                EVP_DecryptFinal_ex(context, buffer.baseAddress! + Int(total), &length) == 1
            }
            total += length
        }
        guard ok else {
            SecretMemory.wipe(&plaintext)
            return nil
        }
        let result = Array(plaintext[..<Int(total)])
        SecretMemory.wipe(&plaintext)
        return result
    }
}
