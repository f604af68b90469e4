/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_BOOT_CONFIG_H
#define BROKER_BOOT_CONFIG_H

/* Bootstrap of a system instance from its configuration, as flux-core's
 * [bootstrap] table (flux-config-bootstrap(5)):
 *
 *   bootstrap = {
 *     curve_cert = "/etc/flux/system/curve.cert",   # shared by all brokers
 *     default_port = 8050,
 *     default_bind = "tcp://eth0:%p",    # %h: the entry's host, %p: port
 *     default_connect = "tcp://%h:%p",
 *     hosts = [ {host = "node0", bind = ..., connect = ...},
 *               {host = "node[1-63]", parent = "node0"} ],
 *   }
 *
 * Ranks follow the order of hosts (a hostlist range counts as its hosts in
 * order); a broker finds its rank from its hostname; size is the number
 * of hosts.  'parent' names the host of the parent broker, for the
 * "custom" topology (tbon.topo).  Every host is checked once: O(hosts)
 * work and memory, names looked up by binary search.
 */
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "libflux/flux.h"

struct boot_config;

/* True if config has bootstrap.hosts, other than an empty array. */
bool boot_config_enabled (json_t *config);

/* Parse config for the broker on hostname.  NULL with a message: malformed
 * keys, a bad range, a host listed twice, hostname not listed, a parent
 * that is not a listed host, an unreadable curve_cert (size > 1). */
struct boot_config *boot_config_create (json_t *config, const char *hostname,
                                        flux_error_t *error);
void boot_config_destroy (struct boot_config *bc);

uint32_t boot_config_rank (const struct boot_config *bc);
uint32_t boot_config_size (const struct boot_config *bc);

/* The hosts as an RFC 29 hostlist (borrowed). */
const char *boot_config_hostlist (const struct boot_config *bc);

/* True if some entry gave a parent: the tree is then "custom" by default.
 * parents[r] for every rank (parents[0] = 0), or NULL if none was given;
 * a rank of an entry without 'parent' has parent 0. */
bool boot_config_has_parents (const struct boot_config *bc);
const uint32_t *boot_config_parents (const struct boot_config *bc);

/* The bind and connect URIs of rank (%h and %p substituted), into buf.
 * -1 with a message if neither the entry nor the defaults give one. */
int boot_config_bind_uri (const struct boot_config *bc, uint32_t rank,
                          char *buf, size_t len, flux_error_t *error);
int boot_config_connect_uri (const struct boot_config *bc, uint32_t rank,
                             char *buf, size_t len, flux_error_t *error);

/* The shared CURVE key pair (Z85, 40 characters), or NULL for size 1
 * without curve_cert. */
const char *boot_config_pubkey (const struct boot_config *bc);
const char *boot_config_seckey (const struct boot_config *bc);

#endif /* !BROKER_BOOT_CONFIG_H */
