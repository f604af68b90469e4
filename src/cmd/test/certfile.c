/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Tests for certfile: our Z85 against ZeroMQ RFC 32 and libzmq, and the
 * certificates we write against czmq's own reader.
 */
#define _GNU_SOURCE 1
#include <czmq.h>
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "certfile.h"
#include "tap.h"

static void test_z85 (void)
{
    const uint8_t hello[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    uint8_t bytes[64], back[64];
    char txt[128], ref[128];

    ok (z85_encode (txt, sizeof (txt), hello, 8) == 10
            && !strcmp (txt, "HelloWorld"),
        "RFC 32 test vector encodes");
    ok (z85_decode (back, sizeof (back), "HelloWorld") == 8
            && !memcmp (back, hello, 8),
        "and decodes");
    ok (z85_encode (txt, sizeof (txt), hello, 0) == 0 && txt[0] == '\0',
        "empty input encodes to the empty string");
    int matched = 0;
    for (int i = 0; i < 20; i++) {
        randombytes_buf (bytes, sizeof (bytes));
        if (!zmq_z85_encode (ref, bytes, sizeof (bytes)))
            BAIL_OUT ("zmq_z85_encode failed");
        if (z85_encode (txt, sizeof (txt), bytes, sizeof (bytes)) == 80
            && !strcmp (txt, ref) && z85_decode (back, sizeof (back), txt) == 64
            && !memcmp (back, bytes, 64))
            matched++;
    }
    cmp_ok (matched, "==", 20, "random buffers match libzmq and round trip");
    memset (bytes, 0xff, 4);
    z85_encode (txt, sizeof (txt), bytes, 4);
    is (txt, "%nSc0", "0xffffffff is %%nSc0");
    errno = 0;
    ok (z85_encode (txt, sizeof (txt), hello, 7) < 0 && errno == EINVAL,
        "length not a multiple of 4: EINVAL");
    ok (z85_encode (txt, 10, hello, 8) < 0 && errno == EINVAL,
        "no room for the NUL: EINVAL");
    ok (z85_decode (back, sizeof (back), "Hello") == 4, "5 characters decode");
    errno = 0;
    ok (z85_decode (back, sizeof (back), "Hell") < 0 && errno == EINVAL,
        "length not a multiple of 5: EINVAL");
    ok (z85_decode (back, sizeof (back), "Hel o") < 0 && errno == EINVAL,
        "a blank is not Z85");
    ok (z85_decode (back, sizeof (back), "Hel\"o") < 0, "a quote is not Z85");
    ok (z85_decode (back, sizeof (back), "%nSc1") < 0 && errno == EINVAL,
        "a group over 0xffffffff: EINVAL");
    ok (z85_decode (back, 3, "Hello") < 0 && errno == EINVAL,
        "output too small: EINVAL");
}

static void test_write (const char *dir)
{
    uint8_t pub[32], sec[32], check[32];
    char path[PATH_MAX], txt[CERT_KEY_Z85_SIZE];
    const char *meta[] = {"name", "host-1", "keygen.time", "2024-01-01", NULL};
    const char *badkey[] = {"bad key", "v", NULL};
    const char *badval[] = {"k", "quote\"", NULL};
    zcert_t *cert;
    struct stat sb;

    crypto_box_keypair (pub, sec);
    snprintf (path, sizeof (path), "%s/curve.cert", dir);
    ok (certfile_write_secret (path, pub, sec, meta) == 0, "write a cert");
    ok (stat (path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "mode is 0600");
    if (!(cert = zcert_load (path)))
        BAIL_OUT ("zcert_load %s failed", path);
    z85_encode (txt, sizeof (txt), pub, 32);
    is (zcert_public_txt (cert), txt, "czmq reads our public key");
    z85_encode (txt, sizeof (txt), sec, 32);
    is (zcert_secret_txt (cert), txt, "czmq reads our secret key");
    is (zcert_meta (cert, "name"), "host-1", "czmq reads the metadata");
    is (zcert_meta (cert, "keygen.time"), "2024-01-01", "and more of it");
    crypto_scalarmult_base (check, zcert_secret_key (cert));
    ok (!memcmp (check, zcert_public_key (cert), 32),
        "the keys form a CURVE key pair");
    zcert_destroy (&cert);

    ok (certfile_write_secret (path, pub, sec, NULL) == 0,
        "overwrite, without metadata");
    ok ((cert = zcert_load (path)) != NULL
            && !memcmp (zcert_public_key (cert), pub, 32),
        "czmq reads it");
    zcert_destroy (&cert);

    errno = 0;
    ok (certfile_write_secret (path, pub, sec, badkey) < 0 && errno == EINVAL,
        "a metadata key with a blank: EINVAL");
    ok (certfile_write_secret (path, pub, sec, badval) < 0 && errno == EINVAL,
        "a metadata value with a quote: EINVAL");
    ok (certfile_write_secret (NULL, pub, sec, NULL) < 0 && errno == EINVAL,
        "NULL path: EINVAL");
    ok (certfile_write_secret ("", pub, sec, NULL) < 0 && errno == EINVAL,
        "empty path: EINVAL");
    snprintf (path, sizeof (path), "%s/nodir/curve.cert", dir);
    errno = 0;
    ok (certfile_write_secret (path, pub, sec, NULL) < 0 && errno == ENOENT,
        "missing directory: ENOENT");
    unlink (path);
    snprintf (path, sizeof (path),
              "ls -A %s | grep -v '^curve.cert$' | "
              "grep -q .",
              dir);
    ok (system (path) != 0, "failed writes leave no temporary file behind");
}

int main (int argc, char **argv)
{
    char dir[] = "/tmp/certfile-test.XXXXXX";
    char cmd[PATH_MAX];

    plan (NO_PLAN);
    if (sodium_init () < 0 || !mkdtemp (dir))
        BAIL_OUT ("setup failed");
    test_z85 ();
    test_write (dir);
    snprintf (cmd, sizeof (cmd), "rm -rf %s", dir);
    if (system (cmd) != 0)
        diag ("could not remove %s", dir);
    done_testing ();
    return 0;
}
