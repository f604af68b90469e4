/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* mkcorpus - write the seed corpus of router_fuzz into a directory.
 * Usage: mkcorpus DIR   (scripts/fuzz.sh builds and runs it)
 *
 * Each seed is what router_fuzz reads: a configuration byte (source of
 * the messages, rank/size, state: see router_fuzz.c) and then frames of
 * valid requests, events and responses for the broker's services, so
 * that mutations start from messages that get past the decoders and the
 * role checks.  Written with the encoder itself, so they stay valid when
 * the wire format changes.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/message.h"

/* configuration byte (router_fuzz.c) */
#define OWNER 0
#define GUEST 1
#define CHILD 2
#define PARENT 3
#define SIZE1 (0 << 2)
#define R0OF4 (1 << 2)
#define R1OF4 (2 << 2)
#define R1OF8 (3 << 2)
#define JOIN 0x10
#define QUORUM 0x20
#define LOST 0x40

#define ANY FLUX_NODEID_ANY

static const char *dir;
static FILE *seed;
static uint32_t tag;

static void die (const char *what)
{
    fprintf (stderr, "mkcorpus: %s: %s\n", what, strerror (errno));
    exit (1);
}

static void begin (const char *name, uint8_t config)
{
    char path[4096];

    snprintf (path, sizeof (path), "%s/%s", dir, name);
    if (!(seed = fopen (path, "w")) || fputc (config, seed) == EOF)
        die (path);
    tag = 1;
}

static void end (void)
{
    if (fclose (seed) != 0)
        die ("fclose");
}

static void put (flux_msg_t *msg)
{
    ssize_t n = flux_msg_frame_size (msg);
    char *buf = NULL;

    if (n < 0 || !(buf = malloc (n)) || flux_msg_frame_encode (msg, buf, n) != n
        || fwrite (buf, 1, n, seed) != (size_t)n)
        die ("encode");
    free (buf);
    flux_msg_destroy (msg);
}

static int set_flags (flux_msg_t *msg, int flags)
{
    for (int bit = 1; bit < 256; bit <<= 1)
        if ((flags & bit) && flux_msg_set_flag (msg, bit) < 0)
            return -1;
    return 0;
}

/* A request; json NULL: no payload.  flags: extra FLUX_MSGFLAG_* */
static flux_msg_t *request (const char *topic, uint32_t nodeid, int flags,
                            const char *json)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);

    if (!msg)
        die ("create");
    flux_msg_route_enable (msg);
    if (flux_msg_set_topic (msg, topic) < 0
        || flux_msg_set_nodeid (msg, nodeid) < 0
        || flux_msg_set_matchtag (msg, (flags & FLUX_MSGFLAG_NORESPONSE)
                                           ? FLUX_MATCHTAG_NONE
                                           : tag++)
               < 0
        || set_flags (msg, flags) < 0
        || (json && flux_msg_set_string (msg, json) < 0))
        die (topic);
    return msg;
}

static void req (const char *topic, uint32_t nodeid, const char *json)
{
    put (request (topic, nodeid, 0, json));
}

static void req_flags (const char *topic, uint32_t nodeid, int flags,
                       const char *json)
{
    put (request (topic, nodeid, flags, json));
}

static void req_raw (const char *topic, const char *text)
{
    flux_msg_t *msg = request (topic, ANY, 0, NULL);

    if (flux_msg_set_payload (msg, text, strlen (text)) < 0)
        die (topic);
    put (msg);
}

/* A response to a request that went through route "id" (the newest
 * hop first to be popped). */
static void rsp (const char *topic, const char *id, uint32_t matchtag,
                 int errnum)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_RESPONSE);

    if (!msg)
        die ("create");
    flux_msg_route_enable (msg);
    if (flux_msg_set_topic (msg, topic) < 0
        || (id && flux_msg_route_push (msg, id) < 0)
        || flux_msg_set_matchtag (msg, matchtag) < 0
        || flux_msg_set_errnum (msg, errnum) < 0
        || (!errnum && flux_msg_set_string (msg, "{}") < 0))
        die (topic);
    put (msg);
}

static void event (const char *topic, uint32_t seq, bool private)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_EVENT);

    if (!msg || flux_msg_set_topic (msg, topic) < 0
        || flux_msg_set_seq (msg, seq) < 0
        || (private && flux_msg_set_private (msg) < 0)
        || flux_msg_set_string (msg, "{\"x\":1}") < 0)
        die (topic);
    put (msg);
}

static void control (int type, int status)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_CONTROL);

    if (!msg || flux_msg_set_control (msg, type, status) < 0)
        die ("control");
    put (msg);
}

static void services (void)
{
    req ("broker.ping", ANY, "{\"seq\":1,\"pad\":\"xx\"}");
    req ("broker.ping", 3, "{}");
    req ("broker.ping", 99, "{}");
    req ("broker.stats-get", ANY, NULL);
    req ("attr.get", ANY, "{\"name\":\"rank\"}");
    req ("attr.list", ANY, "{}");
    req ("attr.set", ANY, "{\"name\":\"log-stderr-level\",\"value\":\"3\"}");
    req ("attr.set", ANY, "{\"name\":\"fz.a\",\"value\":\"1\"}");
    req ("attr.rm", ANY, "{\"name\":\"fz.a\"}");
    req ("module.list", ANY, "{}");
    req ("module.remove", ANY, "{\"name\":\"nosuch\"}");
    req ("state-machine.get", ANY, "{}");
    req ("overlay.topology", ANY, "{\"rank\":0}");
    req ("overlay.health", ANY, "{}");
    req ("log.stats-get", ANY, "{}");
    req ("nosuch.service", ANY, "{}");
}

static void seeds_owner (void)
{
    begin ("services", OWNER);
    services ();
    end ();

    begin ("services-rank0of4", OWNER | R0OF4);
    services ();
    end ();

    begin ("services-rank1of8", OWNER | R1OF8);
    services ();
    req_flags ("broker.ping", 0, FLUX_MSGFLAG_UPSTREAM, "{}");
    req_flags ("broker.ping", 1, FLUX_MSGFLAG_UPSTREAM, "{}");
    end ();

    begin ("events", OWNER);
    req ("event.subscribe", ANY, "{\"topic\":\"fz.\"}");
    req ("event.publish", ANY,
         "{\"topic\":\"fz.a\",\"flags\":0,\"payload\":\"eyJ4IjoxfQ==\"}");
    req ("event.publish", ANY, "{\"topic\":\"fz.b\",\"flags\":32}");
    event ("fz.c", 0, false);
    req ("event.unsubscribe", ANY, "{\"topic\":\"fz.\"}");
    req ("event.unsubscribe", ANY, "{\"topic\":\"fz.\"}");
    end ();

    begin ("log", OWNER);
    req_raw ("log.append", "<13>1 2026-01-01T00:00:00.000000Z 0 fz 1 - - hi\n"
                           "<11>1 2026-01-01T00:00:00.000000Z 0 fz 1 - - two");
    put (request ("log.dmesg", ANY, FLUX_MSGFLAG_STREAMING,
                  "{\"follow\":true,\"nobacklog\":false}"));
    req ("log.cancel", ANY, "{\"matchtag\":2}");
    put (request ("log.dmesg", ANY, FLUX_MSGFLAG_STREAMING,
                  "{\"follow\":true}"));
    req_raw ("log.append", "more");
    req ("log.clear", ANY, NULL);
    end ();

    begin ("service", OWNER);
    req ("service.add", ANY, "{\"service\":\"fz\"}");
    req ("fz.hello", ANY, "{}");
    req ("fz.hello", 0, "{}");
    rsp ("fz.hello", NULL, 2, 0);
    req ("service.add", ANY, "{\"service\":\"fz\"}");
    req ("service.add", ANY, "{\"service\":\"broker\"}");
    req ("service.remove", ANY, "{\"service\":\"fz\"}");
    req ("service.remove", ANY, "{\"service\":\"fz\"}");
    end ();

    begin ("shutdown", OWNER);
    put (request ("state-machine.wait", ANY, 0, "{}"));
    req ("shutdown.start", ANY, "{}");
    req ("shutdown.start", ANY, "{}");
    req ("state-machine.get", ANY, "{}");
    end ();

    begin ("join", OWNER | JOIN | R1OF4);
    req ("state-machine.wait", ANY, "{}");
    req ("state-machine.get", ANY, "{}");
    req ("attr.get", ANY, "{\"name\":\"size\"}");
    req ("broker.ping", ANY, "{}");
    req_flags ("log.dmesg", ANY, FLUX_MSGFLAG_STREAMING, "{\"follow\":false}");
    end ();

    begin ("noresponse", OWNER | R0OF4);
    req_flags ("broker.ping", 2, FLUX_MSGFLAG_NORESPONSE, "{}");
    /* answers built with "o" that nobody wants (once leaked) */
    req_flags ("attr.list", ANY, FLUX_MSGFLAG_NORESPONSE, "{}");
    req_flags ("module.list", ANY, FLUX_MSGFLAG_NORESPONSE, "{}");
    req_flags ("overlay.health", ANY, FLUX_MSGFLAG_NORESPONSE, "{}");
    req_flags ("fz.x", 3, FLUX_MSGFLAG_NORESPONSE, "{}");
    rsp ("fz.x", "nosuch-uuid", 5, 0);
    rsp ("fz.x", "1", 5, 0);
    control (20, 1);
    end ();
}

static void seeds_guest (void)
{
    begin ("guest", GUEST);
    req ("broker.ping", ANY, "{}");
    req ("attr.set", ANY, "{\"name\":\"fz\",\"value\":\"1\"}");
    req ("service.add", ANY, "{\"service\":\"fz\"}");
    req ("service.add", ANY, "{\"service\":\"1-fz\"}");
    req ("event.subscribe", ANY, "{\"topic\":\"\"}");
    req ("event.publish", ANY, "{\"topic\":\"fz.p\",\"flags\":32}");
    req ("shutdown.start", ANY, "{}");
    req ("module.remove", ANY, "{\"name\":\"x\"}");
    req ("log.dmesg", ANY, "{\"follow\":false}");
    end ();
}

static void seeds_overlay (void)
{
    begin ("child", CHILD | R0OF4);
    req ("broker.ping", 0, "{}");
    req ("broker.ping", ANY, "{}");
    req ("broker.ping", 2, "{}");
    req_flags ("log.append", 1, FLUX_MSGFLAG_UPSTREAM | FLUX_MSGFLAG_NORESPONSE,
               NULL);
    req ("broker.ready", 0, "{\"rank\":1}");
    event ("fz.up", 0, false);
    rsp ("x.y", "0", 3, 0);
    control (0, 0);
    control (1, 1);
    end ();

    begin ("child-quorum", CHILD | R1OF8 | QUORUM);
    req ("state-machine.get", ANY, "{}");
    req_flags ("broker.ready", 1, FLUX_MSGFLAG_NORESPONSE, "{\"rank\":3}");
    req_flags ("broker.ready", 1, FLUX_MSGFLAG_NORESPONSE, "{\"rank\":4}");
    req ("state-machine.get", ANY, "{}");
    end ();

    begin ("child-rank1of8", CHILD | R1OF8);
    req ("attr.get", 1, "{\"name\":\"tbon.fanout\"}");
    req ("broker.ping", 4, "{}");
    rsp ("x.y", NULL, 3, 0);
    rsp ("x.y", "7", 3, 5);
    event ("fz.up", 0, true);
    end ();

    begin ("child-lost", CHILD | R0OF4 | LOST);
    req ("broker.ping", 1, "{}");
    req ("overlay.health", ANY, "{}");
    end ();

    begin ("parent-lost", PARENT | R1OF8 | LOST);
    req ("broker.ping", 1, "{}");
    end ();

    begin ("parent", PARENT | R1OF4);
    event ("fz.down", 1, false);
    event ("broker.shutdown", 2, false);
    req ("broker.ping", 1, "{}");
    req ("broker.ping", 3, "{}");
    rsp ("broker.ping", "3", 1, 0);
    rsp ("broker.ping", NULL, 1, 113);
    end ();
}

int main (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "Usage: mkcorpus DIR\n");
        return 1;
    }
    dir = argv[1];
    seeds_owner ();
    seeds_guest ();
    seeds_overlay ();
    return 0;
}
