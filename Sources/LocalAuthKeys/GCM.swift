// AES-GCM with the key and IV sizes Apple's ECIES uses (AES-128, a 16-byte
// IV: GCM's GHASH-derived counter block, as corecrypto computes it), a
// 16-byte tag and no additional data. LocalAuthSystem's AESGCM is the
// daemon's at-rest box (AES-256, random 12-byte nonce); this is the
// primitive under Apple's wire format, shared by the client and the daemon.
internal import COpenSSL

enum GCM {
    static let tagSize = 16

    static func cipher(forKeySize size: Int) -> OpaquePointer? {
        switch size {
        case 16: return EVP_aes_128_gcm()
        case 24: return EVP_aes_192_gcm()
        case 32: return EVP_aes_256_gcm()
        default: return nil
        }
    }

    /// ciphertext || tag.
    static func seal(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8] {
        guard let cipher = cipher(forKeySize: key.count), let context = EVP_CIPHER_CTX_new() else {
            fatalError("AES-GCM: no cipher for a \(key.count)-byte key")
        }
        defer { EVP_CIPHER_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16 + tagSize)
        var length: Int32 = 0
        var total = 0
        var ok = EVP_EncryptInit_ex(context, cipher, nil, nil, nil) == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1
            && EVP_EncryptInit_ex(context, nil, nil, key, iv) == 1
        if ok, !plaintext.isEmpty {
            ok = EVP_EncryptUpdate(context, &out, &length, plaintext, Int32(plaintext.count)) == 1
            total = Int(length)
        }
        if ok {
            ok = out.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(context, $0.baseAddress! + total, &length) == 1 }
            total += Int(length)
        }
        ok = ok && out.withUnsafeMutableBufferPointer {
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), $0.baseAddress! + total) == 1
        }
        precondition(ok, "AES-GCM encryption failed")
        out.removeSubrange((total + tagSize)...)
        return out
    }

    /// The plaintext, or nil when ciphertext || tag does not authenticate.
    static func open(_ sealed: ArraySlice<UInt8>, key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        guard sealed.count >= tagSize, let cipher = cipher(forKeySize: key.count),
              let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let ciphertext = Array(sealed.dropLast(tagSize))
        var tag = Array(sealed.suffix(tagSize))
        var out = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var length: Int32 = 0
        var total = 0
        var ok = EVP_DecryptInit_ex(context, cipher, nil, nil, nil) == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1
            && EVP_DecryptInit_ex(context, nil, nil, key, iv) == 1
        if ok, !ciphertext.isEmpty {
            ok = EVP_DecryptUpdate(context, &out, &length, ciphertext, Int32(ciphertext.count)) == 1
            total = Int(length)
        }
        ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1
        if ok {
            ok = out.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(context, $0.baseAddress! + total, &length) == 1 }
            total += Int(length)
        }
        guard ok else {
            cleanse(&out)
            return nil
        }
        let plaintext = Array(out[..<total])
        cleanse(&out)
        return plaintext
    }
}
