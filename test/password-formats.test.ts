import { describe, expect, test } from 'bun:test';
import { isCurrentArgon2id, parsePasswordHash, verifyParsedHash } from '../src/hashing/formats';
import {
  DJANGO_DEFAULT_ARGON2,
  FIREBASE_EXAMPLE,
  KRATOS_EXAMPLES,
  LARGEST_ACCEPTED,
  LONG_PASSWORD_BCRYPT,
  PASSWORD,
  SLOW_PHPASS,
  VECTORS,
  WRONG_PASSWORD,
  type HashVector,
} from './password-formats.vectors';

function parse(hash: string) {
  const parsed = parsePasswordHash(hash);
  if (!parsed) throw new Error(`not recognised: ${hash}`);
  return parsed;
}

const byScheme = (scheme: string): HashVector => {
  const found = VECTORS.find((vector) => vector.scheme === scheme);
  if (!found) throw new Error(`no vector for ${scheme}`);
  return found;
};

describe('vectors from independent implementations', () => {
  test.each(VECTORS.map((vector) => [`${vector.scheme} (${vector.label})`, vector] as const))(
    '%s: recognised as itself, right password verifies, wrong one does not',
    async (_name, vector) => {
      const parsed = parse(vector.hash);
      expect(parsed.scheme).toBe(vector.scheme as typeof parsed.scheme);
      expect(await verifyParsedHash(parsed, PASSWORD)).toBe(true);
      expect(await verifyParsedHash(parsed, WRONG_PASSWORD)).toBe(false);
      expect(await verifyParsedHash(parsed, '')).toBe(false);
    },
  );

  test.each(KRATOS_EXAMPLES.map((vector) => [vector.label, vector] as const))('%s', async (_name, vector) => {
    const parsed = parse(vector.hash);
    expect(parsed.scheme).toBe(vector.scheme as typeof parsed.scheme);
    expect(await verifyParsedHash(parsed, vector.password)).toBe(true);
    expect(await verifyParsedHash(parsed, `${vector.password}x`)).toBe(false);
  });

  test("Firebase's published scrypt example verifies with its project parameters", async () => {
    const parsed = parse(FIREBASE_EXAMPLE.hash);
    expect(parsed).toMatchObject({ scheme: 'firebase-scrypt', memCost: 14, rounds: 8 });
    expect(await verifyParsedHash(parsed, FIREBASE_EXAMPLE.password)).toBe(true);
    expect(await verifyParsedHash(parsed, 'user1passwore')).toBe(false);
  });

  test('every scheme the module knows has at least one vector', () => {
    const covered = new Set([...VECTORS, ...KRATOS_EXAMPLES].map((vector) => vector.scheme));
    const schemes = [
      'argon2', 'django-argon2', 'bcrypt', 'django-bcrypt', 'django-bcrypt-sha256', 'wordpress-bcrypt',
      'bcrypt-peppered', 'passlib-pbkdf2', 'kratos-pbkdf2', 'django-pbkdf2', 'pbkdf2-hex', 'werkzeug-pbkdf2',
      'passlib-scrypt', 'kratos-scrypt', 'django-scrypt', 'werkzeug-scrypt', 'firebase-scrypt', 'phpass',
      'md5-crypt', 'sha-crypt', 'hex-digest', 'kratos-digest', 'django-digest', 'ldap-digest', 'kratos-hmac',
      'symfony-digest',
    ];
    expect(schemes.filter((scheme) => !covered.has(scheme))).toEqual([]);
  });
});

describe('bcrypt inputs longer than 72 bytes', () => {
  // Bun.password pre-hashes such inputs with SHA-512; the systems we import from cut them.
  test('verify like the system that made the hash: only the first 72 bytes count', async () => {
    const parsed = parse(LONG_PASSWORD_BCRYPT);
    expect(await verifyParsedHash(parsed, 'ü'.repeat(50))).toBe(true);
    expect(await verifyParsedHash(parsed, `${'ü'.repeat(36)}tail ignored by bcrypt`)).toBe(true);
    expect(await verifyParsedHash(parsed, `${'ü'.repeat(35)}u${'ü'.repeat(14)}`)).toBe(false);
  });

  test('Bun.password alone would reject the right password', async () => {
    expect(await Bun.password.verify('ü'.repeat(50), LONG_PASSWORD_BCRYPT)).toBe(false);
  });
});

describe('malformed strings are not recognised', () => {
  const mutations: [string, (hash: string) => string][] = [
    ['truncated by one character', (hash) => hash.slice(0, -1)],
    ['truncated to 60%', (hash) => hash.slice(0, Math.floor(hash.length * 0.6))],
    ['a character outside its alphabet', (hash) => `${hash.slice(0, -1)}!`],
    ['a wrong prefix', (hash) => `${hash[0]}x${hash.slice(1)}`],
    ['leading whitespace', (hash) => ` ${hash}`],
    ['trailing whitespace', (hash) => `${hash} `],
  ];
  // A pepper is free text, so shortening or changing its last character leaves a valid pepper.
  const fixedLength = VECTORS.filter((vector) => vector.scheme !== 'bcrypt-peppered');

  for (const [name, mutate] of mutations) {
    const cases = (name.startsWith('truncated by') || name.startsWith('a character') ? fixedLength : VECTORS)
      .concat(KRATOS_EXAMPLES)
      .map((vector) => [vector.label, mutate(vector.hash)] as const);
    test.each(cases)(`${name}: %s`, (_label, mutated) => {
      expect(parsePasswordHash(mutated)).toBeUndefined();
    });
  }

  test.each([
    ['empty', ''],
    ['plain text', 'hunter2'],
    ['unknown modular prefix', '$9$abcdefgh$ijklmnop'],
    ['bcrypt $2x$ (the buggy variant)', byScheme('bcrypt').hash.replace(/^\$2a\$/, '$2x$')],
    ['bcrypt with a one-digit cost', byScheme('bcrypt').hash.replace('$04$', '$4$')],
    ['bcrypt salt with stray low bits', byScheme('bcrypt').hash.replace(/^(.{28})./, '$1z')],
    ['bcrypt salt with one stray low bit', byScheme('bcrypt').hash.replace(/^(.{28})./, '$1P')],
    ['bcrypt hash with stray low bits', byScheme('bcrypt').hash.replace(/^(.{59})./, '$1z')],
    ['bcrypt hash with one stray low bit', byScheme('bcrypt').hash.replace(/^(.{59})./, '$1D')],
    ['argon2 padded base64', `${VECTORS[0]!.hash}==`],
    ['argon2 version 16', VECTORS[0]!.hash.replace('v=19', 'v=16')],
    ['argon2 without version', VECTORS[0]!.hash.replace('v=19$', '')],
    ['argon2 with keyid', VECTORS[0]!.hash.replace('p=2', 'p=2,keyid=AAAA')],
    ['argon2 params out of order', VECTORS[0]!.hash.replace('m=1024,t=2', 't=2,m=1024')],
    ['Kratos pbkdf2 with a wrong l=', byScheme('kratos-pbkdf2').hash.replace('l=32', 'l=31')],
    ['Kratos pbkdf2 with sha3-backed sha224', byScheme('kratos-pbkdf2').hash.replace('pbkdf2-sha256', 'pbkdf2-sha224')],
    ['Django pbkdf2 unpadded', byScheme('django-pbkdf2').hash.replace(/=$/, '')],
    ['Kratos digest with an unknown placeholder only', '$md5$pf=e1NBTFR9$MTIz$q+RdKCgc+ipCAcm5ChQwlQ=='],
    ['LDAP salted digest without salt', '{SSHA}qUqP5cyxm6YcTAhz05Hph5gvu9M='],
    ['hex of no digest length', 'a'.repeat(48)],
    ['firescrypt with p=2', FIREBASE_EXAMPLE.hash.replace('p=1', 'p=2')],
    ['firescrypt hash and signer key of different lengths', FIREBASE_EXAMPLE.hash.replace('$lSrfV15cpx95', '$AAAAlSrfV15cpx95')],
    ['sha-crypt rounds below 1000', `$5$rounds=999$abc$${'a'.repeat(42)}.`],
  ])('%s', (_name, text) => {
    expect(parsePasswordHash(text)).toBeUndefined();
  });

  test('a hash longer than 1024 characters', () => {
    expect(parsePasswordHash(`${byScheme('bcrypt').hash}$${'a'.repeat(1024)}`)).toBeUndefined();
  });
});

describe('absurd parameters are refused before any work is done', () => {
  const argon2 = VECTORS[0]!.hash;
  const bcrypt = byScheme('bcrypt').hash; // cost 04
  const passlibScrypt = byScheme('passlib-scrypt').hash; // ln=10
  const kratosScrypt = byScheme('kratos-scrypt').hash; // ln=1024

  test.each([
    ['bcrypt cost 32', bcrypt.replace('$04$', '$32$')],
    ['bcrypt cost 15 (over 2 s)', bcrypt.replace('$04$', '$15$')],
    ['bcrypt cost 03', bcrypt.replace('$04$', '$03$')],
    ['argon2 with 4 GiB of memory', argon2.replace('m=1024', 'm=4194304')],
    ['argon2 with 128 MiB + 1 KiB', argon2.replace('m=1024', 'm=131073')],
    ['argon2 with 64 MiB and 13 passes', argon2.replace('m=1024,t=2', 'm=65536,t=13')],
    ['argon2 with parallelism 0', argon2.replace('p=2', 'p=0')],
    ['argon2 with less memory than 8 × parallelism', argon2.replace('m=1024', 'm=8')],
    // Two or more lanes cost a thread per lane and slice of every pass: this one took 9 s.
    ['argon2 with 2 lanes and 49,152 passes', argon2.replace('m=1024,t=2', 'm=16,t=49152')],
    ['argon2 with 2 lanes and 1,967 passes of 16 KiB', argon2.replace('m=1024,t=2', 'm=16,t=1967')],
    ['argon2 with 16 lanes and 41 passes of 16 MiB', argon2.replace('m=1024,t=2,p=2', 'm=16384,t=41,p=16')],
    ['argon2 with 128 MiB, 6 passes and 2 lanes', argon2.replace('m=1024,t=2', 'm=131072,t=6')],
    ['argon2 with one lane and 4,097 passes', argon2.replace('m=1024,t=2,p=2', 'm=16,t=4097,p=1')],
    ['scrypt N=2^20 (1 GiB)', passlibScrypt.replace('ln=10', 'ln=20')],
    ['scrypt N=2^16, r=8, p=8 (over 1 s)', passlibScrypt.replace('ln=10,r=8,p=1', 'ln=16,r=8,p=8')],
    ['Kratos scrypt N not a power of two', kratosScrypt.replace('ln=1024', 'ln=1000')],
    ['Firebase mem_cost 20', FIREBASE_EXAMPLE.hash.replace('ln=14', 'ln=20')],
    ['PBKDF2 with 10 million iterations', byScheme('django-pbkdf2').hash.replace('$1000$', '$10000000$')],
    ['PBKDF2 with 0 iterations', byScheme('django-pbkdf2').hash.replace('$1000$', '$0$')],
    ['PBKDF2 iterations with a leading zero', byScheme('django-pbkdf2').hash.replace('$1000$', '$01000$')],
    ['phpass with 2^21 rounds', SLOW_PHPASS.replace('$P$F', '$P$J')],
    ['phpass with 2^6 rounds', SLOW_PHPASS.replace('$P$F', '$P$4')],
    ['sha-crypt with a billion rounds', `$6$rounds=999999999$abc$${'a'.repeat(85)}.`],
    ['Symfony with 10 million iterations', byScheme('symfony-digest').hash.replace('$5000$', '$10000000$')],
  ])('%s', (_name, text) => {
    expect(parsePasswordHash(text)).toBeUndefined();
  });

  // Each is a real hash of PASSWORD (see the vectors file), so the check does the whole work: about 1 s each.
  test.each([
    ['bcrypt cost 14', LARGEST_ACCEPTED.bcrypt_14, { scheme: 'bcrypt', cost: 14 }],
    ['argon2 with 64 MiB and 12 passes', LARGEST_ACCEPTED.argon2_64m_t12_p1, { memoryKiB: 65_536, iterations: 12, parallelism: 1 }],
    ['argon2 with 128 MiB and 6 passes', LARGEST_ACCEPTED.argon2_128m_t6_p1, { memoryKiB: 131_072, iterations: 6, parallelism: 1 }],
    ['argon2 with 16 lanes, 16 MiB and 40 passes', LARGEST_ACCEPTED.argon2_16m_t40_p16, { memoryKiB: 16_384, iterations: 40, parallelism: 16 }],
    ['argon2 with 2 lanes and 1,966 passes', LARGEST_ACCEPTED.argon2_16k_t1966_p2, { memoryKiB: 16, iterations: 1_966, parallelism: 2 }],
    ["Django's default argon2 (100 MiB, 8 lanes)", DJANGO_DEFAULT_ARGON2, { scheme: 'django-argon2', memoryKiB: 102_400, iterations: 2, parallelism: 8 }],
    ['scrypt N=2^16, r=8, p=4', LARGEST_ACCEPTED.scrypt_16_8_4, { scheme: 'passlib-scrypt', N: 65_536, r: 8, p: 4 }],
    ['PBKDF2 with 2 million iterations', LARGEST_ACCEPTED.django_pbkdf2_2m, { scheme: 'django-pbkdf2', digest: 'sha256', iterations: 2_000_000 }],
    ['phpass with 2^19 rounds', LARGEST_ACCEPTED.phpass_19, { scheme: 'phpass', countLog2: 19 }],
    ["sha512-crypt at passlib's default 656,000 rounds", LARGEST_ACCEPTED.sha512_crypt_656000, { scheme: 'sha-crypt', algorithm: 'sha512', rounds: 656_000 }],
  ] as const)('the largest accepted: %s, with its cost as written, verifies', async (_name, text, cost) => {
    const parsed = parse(text);
    expect(parsed).toMatchObject(cost);
    expect(await verifyParsedHash(parsed, PASSWORD)).toBe(true);
  }, 15_000);
});

test('a long JS hash loop leaves the event loop free', async () => {
  const parsed = parse(SLOW_PHPASS);
  // Timers that ran while the check was under way: a loop that never yields lets none run, a sliced one
  // (about a millisecond a slice, 131,072 MD5 calls) lets one run between most slices. Counted, not
  // timed, so a busy machine cannot fail it; how long the check takes is measured by `bun run bench`.
  let ticks = 0;
  let ticking = true;
  const tick = () => {
    ticks++;
    if (ticking) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const verified = await verifyParsedHash(parsed, PASSWORD);
  ticking = false;
  expect(verified).toBe(true);
  expect(ticks).toBeGreaterThanOrEqual(10);
});

describe('isCurrentArgon2id', () => {
  const current = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 } as const;

  test("Gatehouse's own hash is current", async () => {
    const hash = await Bun.password.hash('any password', current);
    expect(hash).toStartWith('$argon2id$v=19$m=19456,t=2,p=1$');
    expect(isCurrentArgon2id(hash)).toBe(true);
  });

  test.each([
    ['argon2id with more memory', { ...current, memoryCost: 65536 }],
    ['argon2id with more passes', { ...current, timeCost: 3 }],
    ['argon2i with the same parameters', { ...current, algorithm: 'argon2i' }],
    ['bcrypt', { algorithm: 'bcrypt', cost: 4 }],
  ] as const)('%s is not', async (_name, options) => {
    expect(isCurrentArgon2id(await Bun.password.hash('any password', options))).toBe(false);
  });

  test('imported hashes, Django-wrapped and malformed ones are not', async () => {
    const own = await Bun.password.hash('any password', current);
    expect(isCurrentArgon2id(`argon2${own}`)).toBe(false);
    expect(isCurrentArgon2id(own.slice(0, -1))).toBe(false);
    expect(isCurrentArgon2id(own.replace('m=19456', 'm=19457'))).toBe(false);
    for (const vector of VECTORS) expect(isCurrentArgon2id(vector.hash)).toBe(false);
    expect(isCurrentArgon2id('')).toBe(false);
  });
});
