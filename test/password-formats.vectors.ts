/**
 * Password-hash test vectors made by implementations other than ours, pinned once.
 *
 * Most come from Debian 12's packages, run once with /usr/bin/python3: python3-passlib 1.7.4,
 * python3-bcrypt 3.2.2, python3-argon2 21.1.0, python3-django 3.2.25, python3-werkzeug 2.2.2, and
 * php-cli 8.2 with php-symfony-password-hasher 5.4 (for WordPress 6.8 and Symfony). Where a package
 * has no hasher for a layout (Kratos's, Clerk's hex PBKDF2, Django 4's and Werkzeug 3's scrypt), the
 * digest comes from Python's hashlib and the script lays it out as that system does. The script,
 * verbatim (`/usr/bin/python3 gen_vectors.py > vectors.json`):
 *
 * ```python
 * import base64, hashlib, hmac, json, subprocess
 * import bcrypt
 * from passlib import hash as ph
 * from django.conf import settings
 * settings.configure()
 * from django.contrib.auth import hashers as dj
 * from werkzeug.security import generate_password_hash
 *
 * PW = 'correct horse battery stäple'
 * b64 = lambda b: base64.b64encode(b).decode()
 * b64raw = lambda b: b64(b).rstrip('=')
 * php = lambda code: subprocess.run(['php', '-r', code, PW], capture_output=True, text=True, check=True).stdout
 * class DjArgon2(dj.Argon2PasswordHasher): memory_cost, parallelism = 1024, 2
 * class DjBcrypt(dj.BCryptPasswordHasher): rounds = 4
 * class DjBcryptSha256(dj.BCryptSHA256PasswordHasher): rounds = 4
 * salt, text_salt, pepper = bytes(range(16)), 'Zx9kQ2mP7rT4', '6b1e2c'
 * scrypt64 = lambda **k: hashlib.scrypt(PW.encode(), salt=text_salt.encode(), maxmem=2**26, dklen=64, **k)
 * v = [
 *   ('argon2', 'argon2id', ph.argon2.using(type='ID', memory_cost=1024, time_cost=2, parallelism=2).hash(PW)),
 *   ('argon2', 'argon2i', ph.argon2.using(type='I', memory_cost=1024, time_cost=2, parallelism=2).hash(PW)),
 *   ('argon2', 'argon2d', ph.argon2.using(type='D', memory_cost=1024, time_cost=2, parallelism=2).hash(PW)),
 *   ('django-argon2', 'Django Argon2PasswordHasher', DjArgon2().encode(PW, dj.get_random_string(12))),
 *   ('bcrypt', '$2a$', ph.bcrypt.using(ident='2a', rounds=4).hash(PW)),
 *   ('bcrypt', '$2b$', ph.bcrypt.using(ident='2b', rounds=5).hash(PW)),
 *   ('bcrypt', '$2y$', ph.bcrypt.using(ident='2y', rounds=4).hash(PW)),
 *   ('django-bcrypt', 'Django BCryptPasswordHasher', DjBcrypt().encode(PW, DjBcrypt().salt())),
 *   ('django-bcrypt-sha256', 'Django BCryptSHA256PasswordHasher', DjBcryptSha256().encode(PW, DjBcryptSha256().salt())),
 *   ('wordpress-bcrypt', 'WordPress 6.8 wp_hash_password', php('echo "\\$wp" . password_hash(base64_encode(hash_hmac("sha384", $argv[1], "wp-sha384", true)), PASSWORD_BCRYPT, ["cost" => 5]);')),
 *   ('bcrypt-peppered', 'Devise bcrypt with pepper', bcrypt.hashpw((PW + pepper).encode(), bcrypt.gensalt(4)).decode() + '$' + pepper),
 *   ('passlib-pbkdf2', 'sha1', ph.pbkdf2_sha1.using(rounds=1000).hash(PW)),
 *   ('passlib-pbkdf2', 'sha256', ph.pbkdf2_sha256.using(rounds=1000).hash(PW)),
 *   ('passlib-pbkdf2', 'sha512', ph.pbkdf2_sha512.using(rounds=1000).hash(PW)),
 *   ('kratos-pbkdf2', 'sha256', '$pbkdf2-sha256$i=1000,l=32$%s$%s' % (b64raw(salt), b64raw(hashlib.pbkdf2_hmac('sha256', PW.encode(), salt, 1000, 32)))),
 *   ('kratos-pbkdf2', 'sha512', '$pbkdf2-sha512$i=1000,l=64$%s$%s' % (b64raw(salt), b64raw(hashlib.pbkdf2_hmac('sha512', PW.encode(), salt, 1000, 64)))),
 *   ('django-pbkdf2', 'sha256', dj.PBKDF2PasswordHasher().encode(PW, text_salt, iterations=1000)),
 *   ('django-pbkdf2', 'sha1', dj.PBKDF2SHA1PasswordHasher().encode(PW, text_salt, iterations=1000)),
 *   ('django-pbkdf2', 'sha512 hex (Clerk pbkdf2_sha512)', 'pbkdf2_sha512$1000$%s$%s' % (text_salt, hashlib.pbkdf2_hmac('sha512', PW.encode(), text_salt.encode(), 1000).hex())),
 *   ('pbkdf2-hex', 'Clerk pbkdf2_sha512_hex', 'pbkdf2_sha512_hex$1000$%s$%s' % (salt.hex(), hashlib.pbkdf2_hmac('sha512', PW.encode(), salt, 1000).hex())),
 *   ('werkzeug-pbkdf2', 'sha256', generate_password_hash(PW, 'pbkdf2:sha256:1000')),
 *   ('passlib-scrypt', 'ln=10', ph.scrypt.using(rounds=10).hash(PW)),
 *   ('kratos-scrypt', 'N literal', '$scrypt$ln=1024,r=8,p=1$%s$%s' % (b64(salt), b64(hashlib.scrypt(PW.encode(), salt=salt, n=1024, r=8, p=1, dklen=32)))),
 *   ('django-scrypt', 'Django 4 ScryptPasswordHasher layout', 'scrypt$1024$%s$8$1$%s' % (text_salt, b64(scrypt64(n=1024, r=8, p=1)))),
 *   ('werkzeug-scrypt', 'Werkzeug 3 layout', 'scrypt:1024:8:1$%s$%s' % (text_salt, scrypt64(n=1024, r=8, p=1).hex())),
 *   ('phpass', '$P$ (WordPress)', ph.phpass.using(rounds=13).hash(PW)),
 *   ('phpass', '$H$ (phpBB)', ph.phpass.using(rounds=11, ident='H').hash(PW)),
 *   ('md5-crypt', '$1$', ph.md5_crypt.hash(PW)),
 *   ('sha-crypt', '$5$ implicit 5000 rounds', ph.sha256_crypt.using(rounds=5000).hash(PW)),
 *   ('sha-crypt', '$6$ rounds=10000', ph.sha512_crypt.using(rounds=10000).hash(PW)),
 *   ('hex-digest', 'md5', ph.hex_md5.hash(PW)),
 *   ('hex-digest', 'sha1', ph.hex_sha1.hash(PW)),
 *   ('hex-digest', 'sha256', ph.hex_sha256.hash(PW)),
 *   ('hex-digest', 'sha512', ph.hex_sha512.hash(PW)),
 *   ('kratos-digest', 'md5 unsalted', '$md5$' + b64(hashlib.md5(PW.encode()).digest())),
 *   ('kratos-digest', 'md5 {SALT}{PASSWORD}', '$md5$pf=%s$%s$%s' % (b64(b'{SALT}{PASSWORD}'), b64(salt), b64(hashlib.md5(salt + PW.encode()).digest()))),
 *   ('kratos-digest', 'sha256 {PASSWORD}{SALT}', '$sha256$pf=%s$%s$%s' % (b64(b'{PASSWORD}{SALT}'), b64(salt), b64(hashlib.sha256(PW.encode() + salt).digest()))),
 *   ('kratos-digest', 'sha512 {SALT}$${PASSWORD}', '$sha512$pf=%s$%s$%s' % (b64(b'{SALT}$${PASSWORD}'), b64(salt), b64(hashlib.sha512(salt + b'$$' + PW.encode()).digest()))),
 *   ('django-digest', 'Django SHA1PasswordHasher', dj.SHA1PasswordHasher().encode(PW, text_salt)),
 *   ('django-digest', 'Django MD5PasswordHasher', dj.MD5PasswordHasher().encode(PW, text_salt)),
 *   ('django-digest', 'Django UnsaltedSHA1PasswordHasher', dj.UnsaltedSHA1PasswordHasher().encode(PW, '')),
 *   ('ldap-digest', '{MD5}', ph.ldap_md5.hash(PW)),
 *   ('ldap-digest', '{SMD5}', ph.ldap_salted_md5.hash(PW)),
 *   ('ldap-digest', '{SHA}', ph.ldap_sha1.hash(PW)),
 *   ('ldap-digest', '{SSHA}', ph.ldap_salted_sha1.hash(PW)),
 *   ('ldap-digest', '{SSHA256}', ph.ldap_salted_sha256.hash(PW)),
 *   ('ldap-digest', '{SSHA512}', ph.ldap_salted_sha512.hash(PW)),
 *   ('kratos-hmac', 'sha256', '$hmac-sha256$%s$%s' % (b64(hmac.new(salt, PW.encode(), 'sha256').hexdigest().encode()), b64(salt))),
 *   ('kratos-hmac', 'sha1', '$hmac-sha1$%s$%s' % (b64(hmac.new(salt, PW.encode(), 'sha1').hexdigest().encode()), b64(salt))),
 *   ('symfony-digest', 'Symfony MessageDigestPasswordHasher sha512', 'sha512_symfony$5000$%s$%s' % (text_salt, php('require "/usr/share/php/Symfony/Component/PasswordHasher/autoload.php"; echo (new Symfony\\Component\\PasswordHasher\\Hasher\\MessageDigestPasswordHasher("sha512", true, 5000))->hash($argv[1], "%s");' % text_salt))),
 * ]
 * print(json.dumps({'password': PW, 'vectors': [{'scheme': s, 'label': l, 'hash': h} for s, l, h in v],
 *   'long_bcrypt': bcrypt.hashpw(('ü' * 50).encode(), bcrypt.gensalt(4)).decode(),
 *   'slow_phpass': ph.phpass.using(rounds=17).hash(PW),
 *   'django_argon2_default': dj.Argon2PasswordHasher().encode(PW, dj.get_random_string(12))}, indent=1, ensure_ascii=False))
 * ```
 *
 * FIREBASE_EXAMPLE is the worked example in the README of github.com/firebase/scrypt (project
 * parameters, the exported user's salt and hash, and the password), in Ory Kratos's `$firescrypt$`
 * layout. KRATOS_EXAMPLES are strings from Ory Kratos's own hash tests (hash/hasher_test.go).
 */

export interface HashVector {
  /** The `scheme` parsePasswordHash must report. */
  scheme: string;
  label: string;
  hash: string;
}

export const PASSWORD = 'correct horse battery stäple';
/** Differs from PASSWORD in one character. */
export const WRONG_PASSWORD = 'correct horse battery staple';

export const VECTORS: HashVector[] = [
  { scheme: 'argon2', label: 'argon2id', hash: '$argon2id$v=19$m=1024,t=2,p=2$8l6rdW7Nudf63/ufc865tw$EpSF/WQ3FbCGCTs+mFAdmg' },
  { scheme: 'argon2', label: 'argon2i', hash: '$argon2i$v=19$m=1024,t=2,p=2$7Z2zltL6nzNGSEnJmXMuhQ$1J/+DAfaCbw1jsAePQQfzg' },
  { scheme: 'argon2', label: 'argon2d', hash: '$argon2d$v=19$m=1024,t=2,p=2$BQDg/F+rda41JgTgfI/xng$YBLDO31bnB3FfLJubLnRaQ' },
  { scheme: 'django-argon2', label: 'Django Argon2PasswordHasher', hash: 'argon2$argon2id$v=19$m=1024,t=2,p=2$ZTFWVDV0MFBqWnpo$dwzMSR55og85wUyp9C+yqA' },
  { scheme: 'bcrypt', label: '$2a$', hash: '$2a$04$f6.WT/QSKTApLr87p2C7Te7XLydE9SGdjcmXQEZCrxkQK0dTPGmI2' },
  { scheme: 'bcrypt', label: '$2b$', hash: '$2b$05$qNnXSEkqp9WGS0IMRSpkhOELHjngPokdhYA1LQobooDuo9NpbR43y' },
  { scheme: 'bcrypt', label: '$2y$', hash: '$2y$04$gcgP/Qo3C9f/OEgzwbmsHuLsqTggE3jrIB/8cbgW9nTXU/WSaEYrC' },
  { scheme: 'django-bcrypt', label: 'Django BCryptPasswordHasher', hash: 'bcrypt$$2b$04$ABw/W01lCunnwHzHy/2AuelA9t6EQSk716iPfZyY73Nc6GVo.UMSm' },
  { scheme: 'django-bcrypt-sha256', label: 'Django BCryptSHA256PasswordHasher', hash: 'bcrypt_sha256$$2b$04$66KbDHDL5KguQrTPzTQeGOEVloJEgO0j6JjcOUp787HR7jwQ3TfNi' },
  { scheme: 'wordpress-bcrypt', label: 'WordPress 6.8 wp_hash_password', hash: '$wp$2y$05$C8xDrBHTXAiYCe4lIuxcHeioNPp33OC3zYX4swpmTegndNKt0hpAy' },
  { scheme: 'bcrypt-peppered', label: 'Devise bcrypt with pepper', hash: '$2b$04$wYr/pAnRtcA4yvQKcfw7B.TarhIRkbmLHbeEOJSBpvC7jHcOTu4y2$6b1e2c' },
  { scheme: 'passlib-pbkdf2', label: 'sha1', hash: '$pbkdf2$1000$rJWyFgKAkLLW.l.LkXJOaQ$cHiEXNE3N8p7vbky9R71n3mHLMw' },
  { scheme: 'passlib-pbkdf2', label: 'sha256', hash: '$pbkdf2-sha256$1000$4LwXopSyFuLcW4sRgvB.Dw$wSfPRaLuVKNhGUcrf.y4q2q/jLwk.6XdbOG5IFuGll4' },
  { scheme: 'passlib-pbkdf2', label: 'sha512', hash: '$pbkdf2-sha512$1000$k1IqJUQoReidU4qRcm4tpQ$D06VYv8lPOLm6erz3PBMBRU1DKqIPWmL/kfTJGc7jIEoXUDTL4iVAZFoXIO1zfnXugO37XSXQztHCALY4IckNw' },
  { scheme: 'kratos-pbkdf2', label: 'sha256', hash: '$pbkdf2-sha256$i=1000,l=32$AAECAwQFBgcICQoLDA0ODw$2+4p6vQ6S5gnf5AAMp168qdjeu/jv0c7acY05H+peNA' },
  { scheme: 'kratos-pbkdf2', label: 'sha512', hash: '$pbkdf2-sha512$i=1000,l=64$AAECAwQFBgcICQoLDA0ODw$rW/sOPBBENlZQpYApieLZQGqQkfJfNIBKfXypeGTWwpbNGJLKfsEeNhdhpFsVSDPWVdkyvqdXEXq5dOoMQqDWg' },
  { scheme: 'django-pbkdf2', label: 'sha256', hash: 'pbkdf2_sha256$1000$Zx9kQ2mP7rT4$X8BuzA589faJUbxCMtq3znSBBaPHYb6mOij1MTRZee8=' },
  { scheme: 'django-pbkdf2', label: 'sha1', hash: 'pbkdf2_sha1$1000$Zx9kQ2mP7rT4$5+foRj+pdFxb9XqCw/X6o1XUSWM=' },
  { scheme: 'django-pbkdf2', label: 'sha512 hex (Clerk pbkdf2_sha512)', hash: 'pbkdf2_sha512$1000$Zx9kQ2mP7rT4$55aabd0486464dec3d4362eef61761d8b114d3b0113ef1633b80ff2ded6c1ab61f8e6ac0726425cabc2ae0f36f33d07597750f9008d2a78e02b662bf3e95d5ee' },
  { scheme: 'pbkdf2-hex', label: 'Clerk pbkdf2_sha512_hex', hash: 'pbkdf2_sha512_hex$1000$000102030405060708090a0b0c0d0e0f$ad6fec38f04110d959429600a6278b6501aa4247c97cd20129f5f2a5e1935b0a5b34624b29fb0478d85d86916c5520cf595764cafa9d5c45eae5d3a8310a835a' },
  { scheme: 'werkzeug-pbkdf2', label: 'sha256', hash: 'pbkdf2:sha256:1000$sD9bjcBZdvrTrhPA$15d574e1a85ad706ceffd7ff0c361402bd533051ae86d07c71e597049fd23bd2' },
  { scheme: 'passlib-scrypt', label: 'ln=10', hash: '$scrypt$ln=10,r=8,p=1$ytlba+29N0YIQYgRYkwphQ$Z3vsFAxrbI0isX8s+JJAunWPIsEfSCA/gJsLfYNtLlI' },
  { scheme: 'kratos-scrypt', label: 'N literal', hash: '$scrypt$ln=1024,r=8,p=1$AAECAwQFBgcICQoLDA0ODw==$ufUSEsMtotyS4RpE2AA5zyVnMKTKjNpyy1y5V6IiRTc=' },
  { scheme: 'django-scrypt', label: 'Django 4 ScryptPasswordHasher layout', hash: 'scrypt$1024$Zx9kQ2mP7rT4$8$1$VkQQJS7lyOqCG3Kc4iuYNnRleLbHCfM7o+eqoOE1M0PkSnXXx4HpcRjZbQWm0Uy/QzuJhTm2jf2yQgf6co9G+Q==' },
  { scheme: 'werkzeug-scrypt', label: 'Werkzeug 3 layout', hash: 'scrypt:1024:8:1$Zx9kQ2mP7rT4$564410252ee5c8ea821b729ce22b9836746578b6c709f33ba3e7aaa0e1353343e44a75d7c781e97118d96d05a6d14cbf433b898539b68dfdb24207fa728f46f9' },
  { scheme: 'phpass', label: '$P$ (WordPress)', hash: '$P$BTHUqMQGWCgb92nr56nyAlSkiXYv.l0' },
  { scheme: 'phpass', label: '$H$ (phpBB)', hash: '$H$9kg0NZ17agmkB0H/NwPL0yb8jz8S7N0' },
  { scheme: 'md5-crypt', label: '$1$', hash: '$1$iQ2koCt8$/QHW9RDkTR1DhghLcjVrc1' },
  { scheme: 'sha-crypt', label: '$5$ implicit 5000 rounds', hash: '$5$gVcQC1bXmytR0nVD$qc/mJLp3vKQ4Cvj2.aWyfVa/SGuI49hxDYbW9Q8FcB.' },
  { scheme: 'sha-crypt', label: '$6$ rounds=10000', hash: '$6$rounds=10000$0hxp04OVcQRNDUii$S9R9YNEsGcjQkhSMGXkh4fiYMdsDRmBKX6mSrzelHq87em1aMM2R0PrwGMH.qi3dRN2DcXr6ZaV1Dv5XgWN85/' },
  { scheme: 'hex-digest', label: 'md5', hash: '12307c065041e1cd98dae8d2b5be878f' },
  { scheme: 'hex-digest', label: 'sha1', hash: '18b05744640237f098309183cdc9275a04ddacdd' },
  { scheme: 'hex-digest', label: 'sha256', hash: 'cdae103a7034fa76050ddd3b322ec3e169e5da075d5c642a0207ba6e3857e068' },
  { scheme: 'hex-digest', label: 'sha512', hash: 'c694d7679dd4e3edc421f8bca87c24c604e5cd17478e691e3889d36ed0e614a5addc95efed71155cb3a9307e79326a2967e374d3c9dd9d5430893671b820c1a8' },
  { scheme: 'kratos-digest', label: 'md5 unsalted', hash: '$md5$EjB8BlBB4c2Y2ujStb6Hjw==' },
  { scheme: 'kratos-digest', label: 'md5 {SALT}{PASSWORD}', hash: '$md5$pf=e1NBTFR9e1BBU1NXT1JEfQ==$AAECAwQFBgcICQoLDA0ODw==$grIAbEuVJnn7UGVNHwzZAg==' },
  { scheme: 'kratos-digest', label: 'sha256 {PASSWORD}{SALT}', hash: '$sha256$pf=e1BBU1NXT1JEfXtTQUxUfQ==$AAECAwQFBgcICQoLDA0ODw==$FNfCi7fV2eK9Ni+avGiIhmqkjFtszG/YuzFIVP/Fo7k=' },
  { scheme: 'kratos-digest', label: 'sha512 {SALT}$${PASSWORD}', hash: '$sha512$pf=e1NBTFR9JCR7UEFTU1dPUkR9$AAECAwQFBgcICQoLDA0ODw==$wzIaV4/PWbcfvdfL4CP7fjcOiKTSjUtPGysX1fe1vQ1irBX4qRMaFuiU7WVt0SLnAo9onNBltDikliAdyVveTA==' },
  { scheme: 'django-digest', label: 'Django SHA1PasswordHasher', hash: 'sha1$Zx9kQ2mP7rT4$eafb1e280f9fd001321894edce90b736987609a8' },
  { scheme: 'django-digest', label: 'Django MD5PasswordHasher', hash: 'md5$Zx9kQ2mP7rT4$7fdb40235facf5791d9e82db2624e42c' },
  { scheme: 'django-digest', label: 'Django UnsaltedSHA1PasswordHasher', hash: 'sha1$$18b05744640237f098309183cdc9275a04ddacdd' },
  { scheme: 'ldap-digest', label: '{MD5}', hash: '{MD5}EjB8BlBB4c2Y2ujStb6Hjw==' },
  { scheme: 'ldap-digest', label: '{SMD5}', hash: '{SMD5}OcXMtQaHpS9mhd/JYbsIMTWm9H4=' },
  { scheme: 'ldap-digest', label: '{SHA}', hash: '{SHA}GLBXRGQCN/CYMJGDzcknWgTdrN0=' },
  { scheme: 'ldap-digest', label: '{SSHA}', hash: '{SSHA}WnEbWaJ3a8Iw9OCg+GmRumeesQQfo5RS' },
  { scheme: 'ldap-digest', label: '{SSHA256}', hash: '{SSHA256}Gsaa2r9LOxtCmKfJS0XK+XA6MemdR03g97/MGg6g3AERQggBQGjtHQ==' },
  { scheme: 'ldap-digest', label: '{SSHA512}', hash: '{SSHA512}PKX9jpCOrEvR0C17JZaw8YsLW/7EVJQloC3VrZn8KLI163WoTKymBqua0Bz5mZeDcsqJ2bKsdZEAYoSu1cIFQUlJSSml9H7v' },
  { scheme: 'kratos-hmac', label: 'sha256', hash: '$hmac-sha256$NGIxM2UzMTM3NjgwYzU0NzIzMWYxYmM2ZDU3ODQzODk0OTA4NjQ4ZGU4MjA5YmFmMzY1ODVkNjIwYjAwZDIyNA==$AAECAwQFBgcICQoLDA0ODw==' },
  { scheme: 'kratos-hmac', label: 'sha1', hash: '$hmac-sha1$ZWQ0OWZkZjI2YmMyMzEwY2M0MDQyZmVkZTJjYTRkOWY3NDY1YjNiMQ==$AAECAwQFBgcICQoLDA0ODw==' },
  { scheme: 'symfony-digest', label: 'Symfony MessageDigestPasswordHasher sha512', hash: 'sha512_symfony$5000$Zx9kQ2mP7rT4$LUGxQ34amH2EWWZMXQYiisZEjFk1vemxY0/1ldL2M7/Z8gFR+LljLaawmm0TAxrbgesVCxF7UAaHmhhZkItCIA==' },
];

/** bcrypt of 'ü' × 50 (100 bytes): Python's bcrypt reads only the first 72 bytes. */
export const LONG_PASSWORD_BCRYPT = '$2b$04$Rxq47tmE1xDTvNOI.Iu2SuzaPQmrl6iPF6dHLU.F.6eVBQ6aNLEf.';

/** phpass at 2^17 rounds, slow enough (~150 ms) to watch the event loop during a check. */
export const SLOW_PHPASS = '$P$Fon1RBr.XM8TXrjIUvFqv55/ZCi7zc0';

/** Django 3.2's Argon2PasswordHasher defaults (m=102400 KiB): above our 64 MiB bound. */
export const DJANGO_DEFAULT_ARGON2 = 'argon2$argon2id$v=19$m=102400,t=2,p=8$enZqNUtCckdPSG0x$LaQE+pvoqiE4wCs+hOrWig';

export const FIREBASE_EXAMPLE = {
  password: 'user1password',
  hash:
    '$firescrypt$ln=14,r=8,p=1$42xEC+ixf3L2lw==$lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==' +
    '$Bw==$jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
};

export const KRATOS_EXAMPLES: (HashVector & { password: string })[] = [
  { scheme: 'firebase-scrypt', label: 'Kratos firescrypt', password: '8x4WjoDbSxJZdR', hash: '$firescrypt$ln=14,r=8,p=1$sPtDhWcd1MfdAw==$xbSou7FOl6mChCyzpCPIQ7tku7nsQMTFtyOZSXXd7tjBa4NtimOx7v42Gv2SfzPQu1oxM2/k4SsbOu73wlKe1A==$Bw==$YE0dO4bwD4JnJafh6lZZfkp1MtKzuKAXQcDCJNJNyeCHairWHKENOkbh3dzwaCdizzOspwr/FITUVlnOAwPKyw==' },
  { scheme: 'kratos-scrypt', label: 'Kratos scrypt', password: 'test', hash: '$scrypt$ln=16384,r=8,p=1$2npRo7P03Mt8keSoMbyD/tKFWyUzjiQf2svUaNDSrhA=$MiCzNcIplSMqSBrm4HckjYqYhaVPPjTARTzwB1cVNYE=' },
  { scheme: 'md5-crypt', label: 'Kratos md5-crypt', password: 'test', hash: '$md5-crypt$TVEiiKNb$SN6/pUaRQS/E8Jh46As2C/' },
  { scheme: 'md5-crypt', label: 'Kratos md5-crypt, empty salt', password: 'test', hash: '$md5-crypt$$whuMjZj.HMFoaTaZRRtkO0' },
  { scheme: 'sha-crypt', label: 'Kratos sha256-crypt', password: 'ory', hash: '$sha256-crypt$rounds=535000$awpcR7lDlnK/S7WE$vHU7KkQwyjfGz6u4MUi7.lH9htK/l63HloTsX1ZMz.3' },
  { scheme: 'kratos-hmac', label: 'Kratos hmac-md4', password: 'test', hash: '$hmac-md4$MWQ5ZTI4Nzc2Zjg4YmE2MTQ5YjQ0OTMyOGE4NWU4YjA=$MTIzNDU=' },
  { scheme: 'kratos-hmac', label: 'Kratos hmac-sha512', password: 'test', hash: '$hmac-sha512$OTFmODY0ZTI1NmU0ZjVhYjhiMDViZGFmNGVmNGZmMGVlNTY4ODYwNWJhYTk4MTk2OTgyMzc3NzI1YTc4MzcxMTMzNzZmY2YxYTk5MGMxM2RiZDk2MGFmMmQ1YzRmODdlMGMwYTNkYjcyNjY0NjM4NGE4YzQ2MjNhZDZkN2UxZTE=$MTIzNDU=' },
  { scheme: 'kratos-digest', label: 'Kratos sha1 {SALT}{PASSWORD}', password: 'test', hash: '$sha1$pf=e1NBTFR9e1BBU1NXT1JEfQ==$NW9wbWtnejAzcg==$2qU2SGWP8viTM1md3FiI3+rjWXQ=' },
  { scheme: 'kratos-digest', label: 'Kratos md5 {PASSWORD}{SALT}$?', password: 'ory', hash: '$md5$pf=e1BBU1NXT1JEfXtTQUxUfSQ/$MTIzNDU2Nzg5$8PhwWanVRnpJAFK4NUjR0w==' },
  { scheme: 'ldap-digest', label: 'Kratos {SSHA256}', password: 'test123', hash: '{SSHA256}czO44OTV17PcF1cRxWrLZLy9xHd7CWyVYplr1rOhuMlx/7IK' },
];

/**
 * The largest hashes of each kind that import accepts, made with the same Debian packages (Python's
 * passlib, Django) by this script, run once:
 *
 * ```python
 * argon2 = lambda m, t, p: ph.argon2.using(type='ID', memory_cost=m, time_cost=t, parallelism=p).hash(PW)
 * { 'bcrypt_14': ph.bcrypt.using(ident='2b', rounds=14).hash(PW),
 *   'argon2_64m_t12_p1': argon2(65536, 12, 1), 'argon2_128m_t6_p1': argon2(131072, 6, 1),
 *   'argon2_16m_t40_p16': argon2(16384, 40, 16), 'argon2_16k_t1966_p2': argon2(16, 1966, 2),
 *   'scrypt_16_8_4': ph.scrypt.using(rounds=16, block_size=8, parallelism=4).hash(PW),
 *   'django_pbkdf2_2m': dj.PBKDF2PasswordHasher().encode(PW, 'Zx9kQ2mP7rT4', iterations=2000000),
 *   'phpass_19': ph.phpass.using(rounds=19).hash(PW),
 *   'sha512_crypt_656000': ph.sha512_crypt.using(rounds=656000).hash(PW) }
 * ```
 */
export const LARGEST_ACCEPTED = {
  bcrypt_14: '$2b$14$UC/dj5FW3W3WYPFJiCe4.ees53b5bViZFAF6PXtAYgSLizBA0RVd.',
  argon2_64m_t12_p1: '$argon2id$v=19$m=65536,t=12,p=1$0fr/nzMGoJRyzpkzJiQEgA$7HmP96O+31Uyooklxx8+gQ',
  argon2_128m_t6_p1: '$argon2id$v=19$m=131072,t=6,p=1$1XrPOacU4pwzZmzNec/ZOw$IMZXRL/Koq9ZqbJotOhd2g',
  argon2_16m_t40_p16: '$argon2id$v=19$m=16384,t=40,p=16$vjdGqJVSam2N8R6DkLIWIg$uOs08C66wrjRPKAwO7T0gw',
  argon2_16k_t1966_p2: '$argon2id$v=19$m=16,t=1966,p=2$RYjxPkdozRljDOHcu9eaUw$fKF+R5I0ykTLwCsVie92KA',
  scrypt_16_8_4: '$scrypt$ln=16,r=8,p=4$GYNw7p0TImQMQWjNmdP6fw$RwT54pUcRO38MLppbEorSZzGiR/Hy/zXPGe2dMa3cew',
  django_pbkdf2_2m: 'pbkdf2_sha256$2000000$Zx9kQ2mP7rT4$fzWtHwcypsLRWtciMi2coJ+rdDTBqH+tPYfYFCS59xs=',
  phpass_19: '$P$HpDXfZDzYeWzrq666CVSYZ5gP0CyK.0',
  sha512_crypt_656000: '$6$rounds=656000$PGgYEXScKLKozfd2$T75RsXnUY.EFAGl1JH6aMPRN.xUY5.0.72U5F5PzizN3fnpAllxVBfLNe4QAQBXQmXYGihrC9.kWMRfUKVI0u0',
} as const;
