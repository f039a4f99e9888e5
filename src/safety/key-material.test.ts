import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { openSshKey, pgpKey } from '../../test/credential-shapes.js';
import { findKeyMaterial, isKeyMaterial, isPgpSecretKey, isPrivateKeyDer } from './key-material.js';
import { base64Runs, byteRuns } from './literal-views.js';

const PAIRS = [
  generateKeyPairSync('rsa', { modulusLength: 1024 }),
  generateKeyPairSync('rsa-pss', { modulusLength: 1024 }),
  generateKeyPairSync('dsa', { modulusLength: 1024, divisorLength: 160 }),
  generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  generateKeyPairSync('ec', { namedCurve: 'secp384r1' }),
  generateKeyPairSync('ed25519'),
  generateKeyPairSync('x25519'),
  generateKeyPairSync('ed448'),
];

/** A certificate's DER (public: never a key). */
const certificates = rootCertificates.slice(0, 30).map((pem) => Buffer.from(pem.split('\n').filter((line) => !line.startsWith('-----')).join(''), 'base64'));

describe('private keys by their structure', () => {
  it('recognises every private key DER node:crypto writes (PKCS#1, SEC1, PKCS#8, encrypted PKCS#8), from its first 48 bytes', () => {
    for (const { privateKey } of PAIRS) {
      const forms = [privateKey.export({ type: 'pkcs8', format: 'der' }), privateKey.export({ type: 'pkcs8', format: 'der', cipher: 'aes-256-cbc', passphrase: 'x' })];
      if (privateKey.asymmetricKeyType === 'rsa') forms.push(privateKey.export({ type: 'pkcs1', format: 'der' }));
      if (privateKey.asymmetricKeyType === 'ec') forms.push(privateKey.export({ type: 'sec1', format: 'der' }));
      for (const der of forms) {
        expect(isPrivateKeyDer(der), privateKey.asymmetricKeyType).toBe(true);
        expect(isPrivateKeyDer(der.subarray(0, 48)), privateKey.asymmetricKeyType).toBe(true);
      }
    }
  });

  it('never takes a public key, a certificate or random bytes for one', () => {
    for (const { publicKey } of PAIRS) {
      expect(isKeyMaterial(publicKey.export({ type: 'spki', format: 'der' })), publicKey.asymmetricKeyType).toBe(false);
      if (publicKey.asymmetricKeyType === 'rsa') expect(isKeyMaterial(publicKey.export({ type: 'pkcs1', format: 'der' }))).toBe(false);
    }
    for (const der of certificates) expect(isKeyMaterial(der)).toBe(false);
    let found = 0;
    for (let i = 0; i < 200_000; i++) if (isKeyMaterial(randomBytes(48))) found++;
    expect(found).toBe(0);
  });

  it('recognises OpenSSH keys by their magic and OpenPGP secret-key packets, not public-key packets', () => {
    expect(isKeyMaterial(Buffer.from(openSshKey().slice(1, -1).join(''), 'base64'))).toBe(true);
    const pgp = Buffer.from(pgpKey().slice(2, -2).join(''), 'base64');
    expect(isPgpSecretKey(pgp)).toBe(true);
    // The same packet as a public key (tag 6: 0x99), or with a modulus whose first byte does not match its bit count.
    expect(isPgpSecretKey(Buffer.from([0x99, ...pgp.subarray(1)]))).toBe(false);
    expect(isPgpSecretKey(Buffer.from([...pgp.subarray(0, 11), 0x01, ...pgp.subarray(12)]))).toBe(false);
  });

  it('finds a key body in a text whatever surrounds it: a PEM line, after an escaped line end, hex, byte literals', () => {
    const der = PAIRS[0]!.privateKey.export({ type: 'pkcs1', format: 'der' });
    const base64 = der.toString('base64');
    const texts = [
      `const body = "${base64.slice(0, 64)}";\n`,
      `{"key": "-----BEGIN ${'RSA'} KEY-----\\n${base64.slice(0, 64)}\\n"}`,
      `KEY = bytes.fromhex("${der.toString('hex')}")\n`,
      `static const unsigned char k[] = { ${[...der.subarray(0, 64)].map((byte) => `0x${byte.toString(16).padStart(2, '0')}`).join(', ')} };\n`,
      `byte[] k = { ${[...der.subarray(0, 64)].map((byte) => (byte > 127 ? byte - 256 : byte)).join(', ')} };\n`,
      `k = b"${[...der.subarray(0, 64)].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('')}"\n`,
    ];
    for (const text of texts) {
      const runs = base64Runs(text);
      expect(findKeyMaterial(text, runs, byteRuns(text, runs), true), text.slice(0, 60)).toHaveLength(1);
    }
  });
});
