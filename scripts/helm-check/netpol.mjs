// The NetworkPolicies of a rendered chart (networkPolicy.enabled), judged by what they let
// through. Run with tsx (it reads the webhook service's private ranges from its source):
//   tsx netpol.mjs rendered.yaml off          networkPolicy.enabled false: no policy at all
//   tsx netpol.mjs rendered.yaml open         enabled with the default (empty) peer lists
//   tsx netpol.mjs rendered.yaml restricted   enabled with networkpolicy-values.yaml's peers
// Every pod the render runs (each Deployment, the bundled StatefulSets, the migration Job, the
// test pod) must be selected by a policy for both directions, so a service added without one
// fails here. Then each connection docs/operations.md (Network policies) lists is evaluated as a
// CNI would (the source's egress and the destination's ingress), between the rendered pods and
// stand-ins for the cluster around them: each must be allowed, and a few it does not list denied.
// A pod a Helm hook runs before the release's objects exist (the migration Job, pre-install or
// pre-upgrade) must have its policies as hooks of the same phases, created before it.
import { readFileSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import yaml from 'js-yaml'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const { isPrivateAddress, parseIPv4, parseIPv6 } = await import(
  resolve(root, 'services/webhook/src/domain/ip-range.ts')
)
const NS = 'mailer' // run.sh renders with --namespace mailer
const [path, mode] = process.argv.slice(2)
const file = basename(path)
const problems = []
const fail = (msg) => problems.push(msg)
const objs = yaml.loadAll(readFileSync(path, 'utf8')).filter((d) => d && typeof d === 'object')
const policies = objs.filter((o) => o.kind === 'NetworkPolicy')

// --- addresses and selectors --------------------------------------------------------------
/** An address as [bits, BigInt] (IPv4 32 bits, IPv6 128), or null. */
function addr(ip) {
  const v4 = parseIPv4(ip)
  if (v4 !== null) return [32, BigInt(v4)]
  const v6 = parseIPv6(ip)
  return v6 && [128, v6.reduce((n, g) => (n << 16n) | BigInt(g), 0n)]
}
function inCidr(ip, cidr) {
  const [base, len] = String(cidr).split('/')
  const a = addr(ip)
  const b = addr(base)
  if (!a || !b || a[0] !== b[0]) return false
  const shift = BigInt(a[0] - Number(len))
  return a[1] >> shift === b[1] >> shift
}
/** First and last address of a CIDR, as strings the service's parser reads. */
function ends(cidr) {
  const [base, len] = String(cidr).split('/')
  const [bits, n] = addr(base)
  const host = (1n << BigInt(bits - Number(len))) - 1n
  const [first, last] = [n & ~host, n | host]
  const text = (v) =>
    bits === 32
      ? [24n, 16n, 8n, 0n].map((s) => (v >> s) & 255n).join('.')
      : [...Array(8)].map((_, i) => ((v >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':')
  return [text(first), text(last)]
}
function selects(sel = {}, labels = {}) {
  const { matchLabels = {}, matchExpressions = [] } = sel
  return (
    Object.entries(matchLabels).every(([k, v]) => labels[k] === v) &&
    matchExpressions.every(({ key, operator, values = [] }) => {
      const has = key in labels
      if (operator === 'In') return has && values.includes(labels[key])
      if (operator === 'NotIn') return !has || !values.includes(labels[key])
      return operator === 'Exists' ? has : !has
    })
  )
}

// --- the pods: the render's, and the cluster around them -----------------------------------
const podLabelsOf = (o) => (o.kind === 'Pod' ? o.metadata.labels : o.spec.template.metadata.labels)
const podSpecOf = (o) => (o.kind === 'Pod' ? o.spec : o.spec.template.spec)
const workloads = objs.filter((o) => ['Deployment', 'StatefulSet', 'Job', 'Pod'].includes(o.kind))
let nextIp = 1
const pod = (ns, labels, ports = {}) => ({ ns, labels, ports, ip: `10.244.0.${nextIp++}` })
const pods = new Map(
  workloads.map((o) => {
    const ports = {}
    for (const c of podSpecOf(o).containers) for (const p of c.ports ?? []) ports[p.name] = p.containerPort
    return [`${o.kind}/${o.metadata.name}`, { ...pod(NS, podLabelsOf(o), ports), o }]
  }),
)
// Stand-ins: networkpolicy-values.yaml's peers name these namespaces and labels.
const kubeDns = pod('kube-system', { 'k8s-app': 'kube-dns' })
// The DNS pods' ports: the default dnsPorts, and networkpolicy-values.yaml's (a DNS listening on
// 5353 behind the kube-dns Service's 53); a port not listed is refused.
const DNS_PORTS = mode === 'restricted' ? [5353] : [53]
const NOT_DNS = mode === 'restricted' ? 53 : 5353
const ingressNginx = pod('ingress-nginx', { 'app.kubernetes.io/name': 'ingress-nginx' })
const prometheus = pod('monitoring', { 'app.kubernetes.io/name': 'prometheus' })
const externalNats = pod('nats', { 'app.kubernetes.io/name': 'nats' })
const natsClient = pod('apps', { 'mailer-nats-client': 'true' })
const strangerHere = pod(NS, { app: 'stranger' })
const strangerThere = pod('default', { app: 'stranger' })
const external = (ip) => ({ ip })
const DATABASE = external('10.20.0.5') // in networkpolicy-values.yaml's database block
const RELAY = external('203.0.113.25') // in its relay block
const PUBLIC = external('198.51.100.7') // a webhook receiver, or a relay elsewhere
// Receivers the webhook service refuses without WEBHOOK_ALLOW_PRIVATE (169.254.169.254: a cloud's
// metadata server).
const PRIVATE = [
  '10.0.0.9',
  '169.254.169.254',
  '172.16.5.4',
  '192.168.1.1',
  '100.64.0.1',
  'fd00::1',
  'fe80::1',
]

// --- evaluation ------------------------------------------------------------------------------
/** policyTypes, or what the API server fills in without them. */
const typesOf = (p) => p.spec.policyTypes ?? ['Ingress', ...(p.spec.egress ? ['Egress'] : [])]
function peerMatches(peer, policyNs, target) {
  if (peer.ipBlock)
    return (
      inCidr(target.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c) => inCidr(target.ip, c))
    )
  if (!target.ns) return false // selectors name pods, never addresses outside the cluster
  const nsOk = peer.namespaceSelector
    ? selects(peer.namespaceSelector, { 'kubernetes.io/metadata.name': target.ns })
    : target.ns === policyNs
  return nsOk && (!peer.podSelector || selects(peer.podSelector, target.labels))
}
function portMatches(entries, port, proto, dst) {
  if (!entries?.length) return true
  return entries.some((e) => {
    if ((e.protocol ?? 'TCP') !== proto) return false
    if (e.port === undefined) return true
    const p = typeof e.port === 'string' ? dst.ports?.[e.port] : e.port
    return e.endPort ? port >= p && port <= e.endPort : port === p
  })
}
/** Whether `pod`'s policies let it take (`Ingress`) or open (`Egress`) this connection. */
function side(type, pod, other, port, proto, dst) {
  if (pod.ns !== NS) return true // the cluster outside the release's namespace has no policy here
  const mine = policies.filter((p) => typesOf(p).includes(type) && selects(p.spec.podSelector, pod.labels))
  if (mine.length === 0) return true
  const [rules, peers] = type === 'Egress' ? ['egress', 'to'] : ['ingress', 'from']
  return mine.some((p) =>
    (p.spec[rules] ?? []).some(
      (r) =>
        (!r[peers]?.length || r[peers].some((peer) => peerMatches(peer, NS, other))) &&
        portMatches(r.ports, port, proto, dst),
    ),
  )
}
const allowed = (src, dst, port, proto = 'TCP') =>
  (!src.ns || side('Egress', src, dst, port, proto, dst)) &&
  (!dst.ns || side('Ingress', dst, src, port, proto, dst))
function expect(want, src, srcName, dst, dstName, port, proto = 'TCP') {
  if (allowed(src, dst, port, proto) !== want)
    fail(`${srcName} -> ${dstName} ${proto} ${port}: ${want ? 'blocked' : 'let through'}`)
}

// --- hooks ---------------------------------------------------------------------------------
const hookOf = (o) => {
  const a = o.metadata.annotations ?? {}
  const phases = String(a['helm.sh/hook'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  return phases.length ? { phases, weight: Number(a['helm.sh/hook-weight'] ?? 0) } : null
}
/**
 * A hook's pods in a phase that runs before the release's own objects are applied (pre-install,
 * pre-upgrade, …) find only the policies Helm has created by then: hooks of that phase with a
 * lower weight. An ordinary policy does not exist yet on a first install, and on an upgrade is
 * the previous release's, so in a namespace that denies traffic by default the pod reaches
 * nothing (or the old peers). Test pods run after everything and may use ordinary ones.
 */
function checkHookPolicies() {
  for (const [name, p] of pods) {
    const hook = hookOf(p.o)
    const early = (hook?.phases ?? []).filter((ph) => ph.startsWith('pre-'))
    if (early.length === 0) continue
    for (const x of policies.filter((x) => selects(x.spec.podSelector, p.labels))) {
      const own = hookOf(x)
      const where = `NetworkPolicy/${x.metadata.name} (selects ${name}, a ${hook.phases.join(',')} hook)`
      if (!own)
        fail(
          `${where}: not a hook, so at ${early.join(', ')} it is not there yet (or the previous release's)`,
        )
      else {
        const missing = hook.phases.filter((ph) => ph !== 'test' && !own.phases.includes(ph))
        if (missing.length) fail(`${where}: not a hook at ${missing.join(', ')}`)
        if (!(own.weight < hook.weight))
          fail(`${where}: weight ${own.weight} is not below the pod's ${hook.weight}: created after it`)
        const policy = String(x.metadata.annotations['helm.sh/hook-delete-policy'] ?? '')
        if (!policy.includes('before-hook-creation'))
          fail(`${where}: no before-hook-creation delete policy, so the next run cannot create it again`)
        if (!policy.includes('hook-succeeded'))
          fail(
            `${where}: no hook-succeeded delete policy, so it outlives its phase and helm uninstall leaves it`,
          )
      }
    }
  }
}

// --- what the render says ------------------------------------------------------------------
/** A pod's environment as literal values: its ConfigMaps, then its own env. */
function envOf(o) {
  const env = {}
  for (const c of podSpecOf(o).containers) {
    for (const f of c.envFrom ?? []) {
      const cm = objs.find((x) => x.kind === 'ConfigMap' && x.metadata.name === f.configMapRef?.name)
      Object.assign(env, cm?.data)
    }
    for (const e of c.env ?? []) if ('value' in e) env[e.name] = e.value
  }
  return env
}
/** DNS_SERVERS as [entry, ip, port]: ip, ip:port, [ipv6] or [ipv6]:port (dns-env.ts). */
function resolvers(list = '') {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = /^\[(.+)\](?::(\d+))?$/.exec(s) ?? (s.split(':').length === 2 ? [s, ...s.split(':')] : [s, s])
      return [s, m[1], Number(m[2] ?? 53)]
    })
}
const truthy = (v) => ['true', '1', 'yes'].includes(v)
const bundled = (name) => [...pods.values()].find((p) => p.labels['app.kubernetes.io/name'] === name)
const component = (p) => p.labels['app.kubernetes.io/component']

if (mode === 'off') {
  if (policies.length) fail(`${policies.length} NetworkPolicies rendered with networkPolicy.enabled false`)
} else if (mode === 'open' || mode === 'restricted') {
  const restricted = mode === 'restricted'
  // Every pod selected, in both directions; every policy selects a pod.
  for (const [name, p] of pods) {
    const types = new Set(policies.filter((x) => selects(x.spec.podSelector, p.labels)).flatMap(typesOf))
    const missing = ['ingress', 'egress'].filter((t) => !types.has(t[0].toUpperCase() + t.slice(1)))
    if (missing.length) fail(`${name}: no NetworkPolicy selects its pods for ${missing.join(' and ')}`)
  }
  for (const x of policies) {
    if (![...pods.values()].some((p) => selects(x.spec.podSelector, p.labels)))
      fail(`NetworkPolicy/${x.metadata.name} selects no pod of the render`)
  }
  checkHookPolicies()
  const pg = bundled('postgresql')
  const nats = bundled('nats')
  const mailer = [...pods].filter(([, p]) => p.labels['app.kubernetes.io/name'] === 'mailer')
  const services = mailer.filter(([n]) => n.startsWith('Deployment/'))
  if (services.length === 0) fail('no Mailer Deployment rendered')
  const [testName, test] = mailer.find(([n]) => n.startsWith('Pod/')) ?? []
  for (const [name, p] of mailer) {
    const svc = name.startsWith('Deployment/')
    const env = envOf(p.o)
    for (const proto of ['UDP', 'TCP']) {
      for (const port of DNS_PORTS) expect(true, p, name, kubeDns, 'kube-dns', port, proto)
      expect(false, p, name, kubeDns, 'kube-dns', NOT_DNS, proto)
    }
    const usesDb = svc || component(p) === 'migrate'
    const usesNats = svc || p === test
    if (pg) expect(usesDb, p, name, pg, pg.o.metadata.name, 5432)
    else expect(usesDb, p, name, DATABASE, `database ${DATABASE.ip}`, 5432)
    if (nats) expect(usesNats, p, name, nats, nats.o.metadata.name, 4222)
    else expect(usesNats, p, name, externalNats, 'NATS in namespace nats', 4222)
    // Only the dispatcher reaches a relay, only with MAIL_TRANSPORT=smtp.
    const smtp = component(p) === 'dispatcher' && env.MAIL_TRANSPORT === 'smtp'
    expect(smtp, p, name, RELAY, `relay ${RELAY.ip}`, 587)
    expect(smtp && !restricted, p, name, PUBLIC, `relay ${PUBLIC.ip}`, 587)
    // Only the webhook service reaches receivers; private ones only with WEBHOOK_ALLOW_PRIVATE.
    const webhook = component(p) === 'webhook'
    const privateOk = webhook && truthy(env.WEBHOOK_ALLOW_PRIVATE)
    expect(webhook, p, name, PUBLIC, `receiver ${PUBLIC.ip}`, 443)
    for (const ip of PRIVATE) expect(privateOk, p, name, external(ip), `private receiver ${ip}`, 443)
    expect(false, p, name, PUBLIC, `receiver ${PUBLIC.ip}`, 8080)
    // The email service's own resolvers (DNS_SERVERS with DOMAIN_VERIFICATION=dns).
    if (component(p) === 'email' && env.DOMAIN_VERIFICATION === 'dns') {
      for (const [s, ip, port] of resolvers(env.DNS_SERVERS))
        for (const proto of ['UDP', 'TCP']) expect(true, p, name, external(ip), `resolver ${s}`, port, proto)
    }
    // In: scrapes of the metrics port on services; the API on the gateway; nothing else.
    const gateway = component(p) === 'gateway'
    for (const [who, src, ok] of [
      ['prometheus', prometheus, svc],
      ['a pod in namespace default', strangerThere, svc && !restricted],
      ['the ingress controller', ingressNginx, svc && !restricted],
    ])
      expect(ok, src, who, p, name, p.ports.metrics ?? 9464)
    if (gateway) {
      expect(true, ingressNginx, 'the ingress controller', p, name, p.ports.http)
      expect(!restricted, strangerThere, 'a pod in namespace default', p, name, p.ports.http)
      expect(!restricted, strangerHere, `a non-Mailer pod in ${NS}`, p, name, p.ports.http)
      if (test) expect(true, test, testName, p, name, p.ports.http)
    }
    expect(false, prometheus, 'prometheus', p, name, 5432)
  }
  // The bundled servers: Mailer's pods (and NATS clients named in natsClientsFrom) only; no egress.
  for (const server of [pg, nats].filter(Boolean)) {
    const name = server.o.metadata.name
    const port = server === pg ? 5432 : 4222
    expect(false, strangerHere, `a non-Mailer pod in ${NS}`, server, name, port)
    expect(server === nats && restricted, natsClient, 'a natsClientsFrom pod', server, name, port)
    expect(false, server, name, PUBLIC, PUBLIC.ip, 443)
    expect(false, server, name, kubeDns, 'kube-dns', DNS_PORTS[0], 'UDP')
  }
  // ipBlocks the API server takes: a network address, and exceptions inside it. The refused
  // ranges are refused by the webhook service too, so a receiver the service would call is
  // never blocked by the policy alone.
  for (const x of policies) {
    const where = `NetworkPolicy/${x.metadata.name}`
    const blocks = [
      ...(x.spec.ingress ?? []).flatMap((r) => r.from ?? []),
      ...(x.spec.egress ?? []).flatMap((r) => r.to ?? []),
    ]
      .map((peer) => peer.ipBlock)
      .filter(Boolean)
    for (const block of blocks) {
      const cidr = String(block.cidr)
      const except = (block.except ?? []).map(String)
      const [base, len] = String(cidr).split('/')
      const a = addr(base)
      if (
        !a ||
        !/^\d+$/.test(len ?? '') ||
        Number(len) > a[0] ||
        ends(cidr)[0] !== ends(`${base}/${a[0]}`)[0]
      )
        fail(`${where}: ipBlock ${cidr} is not a network address with its prefix length`)
      for (const c of except) {
        if (!inCidr(c.split('/')[0], cidr) || Number(c.split('/')[1]) <= Number(len))
          fail(`${where}: except ${c} is not inside ${cidr}`)
        for (const ip of ends(c)) {
          if (!isPrivateAddress(ip))
            fail(`${where}: except ${c} refuses ${ip}, which the webhook service would call`)
        }
      }
    }
  }
} else {
  fail(`unknown mode "${mode}": off, open or restricted`)
}

if (problems.length) {
  console.error(
    `${file} (${mode}): ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
  )
  process.exit(1)
}
console.log(
  `  ${file}: ${mode === 'off' ? 'no NetworkPolicy' : `${policies.length} NetworkPolicies select all ${pods.size} pods; the connections of docs/operations.md pass, others do not`}`,
)
