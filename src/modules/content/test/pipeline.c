/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* pipeline - test driver for the ordering contract of the content
 * service (t1000-content.t): send COUNT content.store requests without
 * waiting, then at once a content.checkpoint-put naming the last blob.
 * When the checkpoint is acknowledged, every blob must already be in the
 * backing store.
 *
 * Usage: pipeline [-n COUNT] [-s MAXSIZE] [-o REFFILE] [-k]
 *        pipeline -v REFFILE
 *   Blobrefs are written to REFFILE (one a line) before anything is sent.
 *   Without -k: check each blob with content-backing.load (bypassing the
 *   cache) and every store response; exit 1 on any problem.
 *   With -k: print "checkpoint acknowledged" and kill -9 the broker
 *   (attribute broker.pid) as soon as the checkpoint is acknowledged.
 *   With -v: load every blob of REFFILE with content.load and check that
 *   it hashes to its blobref.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libcontent/blobref.h"
#include "libcontent/content.h"
#include "libflux/flux.h"

static int verify (const char *reffile);

static void die (const char *what, flux_future_t *f)
{
    fprintf (stderr, "pipeline: %s: %s\n", what,
             f ? future_strerror (f, errno) : strerror (errno));
    exit (1);
}

int main (int argc, char **argv)
{
    int count = 1000, maxsize = 4096, c, i, bad = 0;
    const char *reffile = NULL;
    bool kill_broker = false;
    const char *hashtype;
    flux_future_t **fs, *cf;
    char (*refs)[BLOBREF_MAX_STRING_SIZE];
    flux_t *h;
    FILE *fp;

    while ((c = getopt (argc, argv, "n:s:o:kv:")) != -1) {
        if (c == 'v')
            return verify (optarg);
        if (c == 'n')
            count = atoi (optarg);
        else if (c == 's')
            maxsize = atoi (optarg);
        else if (c == 'o')
            reffile = optarg;
        else if (c == 'k')
            kill_broker = true;
        else {
            fprintf (stderr, "Usage: pipeline [-n N] [-s SIZE] [-o FILE] [-k]"
                             " | -v FILE\n");
            return 1;
        }
    }
    if (count < 1 || maxsize < 16)
        return 1;
    if (!(h = flux_open (NULL, 0)))
        die ("flux_open", NULL);
    if (!(hashtype = flux_attr_get (h, "content.hash")))
        hashtype = "sha1";
    fs = calloc (count, sizeof (*fs));
    refs = calloc (count, sizeof (*refs));
    if (!fs || !refs)
        die ("calloc", NULL);

    /* blobs: a header making each unique, then filler of varying size */
    char *buf = malloc (maxsize);
    if (!buf)
        die ("malloc", NULL);
    for (i = 0; i < count; i++) {
        int len = 16 + (int)((unsigned)(i * 2654435761u) % (maxsize - 15));
        memset (buf, 'a' + i % 26, len);
        snprintf (buf, 16, "%d.%d.", getpid (), i);
        blobref_hash (hashtype, buf, len, refs[i], sizeof (refs[i]));
        if (!(fs[i] = content_store (h, buf, len, 0)))
            die ("content_store", NULL);
    }
    if (reffile) {
        if (!(fp = fopen (reffile, "w")))
            die (reffile, NULL);
        for (i = 0; i < count; i++)
            fprintf (fp, "%s\n", refs[i]);
        fclose (fp);
    }
    if (!(cf = content_checkpoint_put (h, refs[count - 1], count)))
        die ("content_checkpoint_put", NULL);
    if (flux_future_get (cf, NULL) < 0)
        die ("checkpoint-put", cf);
    if (kill_broker) {
        const char *s = flux_attr_get (h, "broker.pid");
        printf ("checkpoint acknowledged\n");
        fflush (stdout);
        if (!s || kill ((pid_t)atol (s), SIGKILL) < 0)
            die ("kill broker", NULL);
    }
    /* The checkpoint is acknowledged: the backing store has every blob.
     * Newest first: those are the ones a broken service would miss. */
    for (i = count - 1; i >= 0 && !kill_broker; i--) {
        flux_future_t *f
            = content_load_byblobref (h, refs[i], CONTENT_FLAG_CACHE_BYPASS);
        const char *ref;
        if (!f || content_load_get (f, NULL, NULL) < 0) {
            fprintf (stderr, "pipeline: %s not in the backing store: %s\n",
                     refs[i],
                     f ? future_strerror (f, errno) : strerror (errno));
            bad++;
        }
        flux_future_destroy (f);
        if (content_store_get_blobref (fs[i], hashtype, &ref) < 0
            || strcmp (ref, refs[i]) != 0) {
            fprintf (stderr, "pipeline: store %d: %s\n", i,
                     future_strerror (fs[i], errno));
            bad++;
        }
    }
    for (i = 0; i < count; i++)
        flux_future_destroy (fs[i]);
    flux_future_destroy (cf);
    flux_close (h);
    free (fs);
    free (refs);
    free (buf);
    if (!kill_broker)
        printf ("%d blobs stored and durable before the checkpoint\n",
                count - bad);
    return bad ? 1 : 0;
}

static int verify (const char *reffile)
{
    char line[BLOBREF_MAX_STRING_SIZE + 2], ref[BLOBREF_MAX_STRING_SIZE];
    char hashtype[16];
    int n = 0, bad = 0;
    flux_t *h;
    FILE *fp;

    if (!(fp = fopen (reffile, "r")))
        die (reffile, NULL);
    if (!(h = flux_open (NULL, 0)))
        die ("flux_open", NULL);
    while (fgets (line, sizeof (line), fp)) {
        flux_future_t *f;
        const void *data;
        size_t len;
        line[strcspn (line, "\n")] = '\0';
        if (blobref_hashtype (line, hashtype, sizeof (hashtype)) < 0)
            die (line, NULL);
        if (!(f = content_load_byblobref (h, line, 0))
            || content_load_get (f, &data, &len) < 0) {
            fprintf (stderr, "pipeline: %s: %s\n", line,
                     f ? future_strerror (f, errno) : strerror (errno));
            bad++;
        }
        else if (blobref_hash (hashtype, data, len, ref, sizeof (ref)) < 0
                 || strcmp (ref, line) != 0) {
            fprintf (stderr, "pipeline: %s: wrong content\n", line);
            bad++;
        }
        flux_future_destroy (f);
        n++;
    }
    fclose (fp);
    flux_close (h);
    printf ("%d of %d blobs loaded and verified\n", n - bad, n);
    return bad || n == 0 ? 1 : 0;
}
