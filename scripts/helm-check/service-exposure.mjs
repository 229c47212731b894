// What each rendered Service exposes. Usage: node service-exposure.mjs rendered.yaml...
// A Service reachable from outside the cluster (LoadBalancer, NodePort) carries no metrics port:
// the gateway's /metrics, /readyz and /livez answer on it, for no one outside. Every pod's metrics
// port is still on a ClusterIP Service, which the ServiceMonitor (when rendered) selects.
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import yaml from 'js-yaml'

const problems = []
const matches = (selector, labels) => Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v)

for (const path of process.argv.slice(2)) {
  const file = basename(path)
  const objs = yaml.loadAll(readFileSync(path, 'utf8')).filter((d) => d && typeof d === 'object')
  const services = objs.filter((o) => o.kind === 'Service')
  const monitor = objs.find((o) => o.kind === 'ServiceMonitor')
  for (const s of services) {
    const where = `${file}: Service/${s.metadata.name}`
    const type = s.spec.type ?? 'ClusterIP'
    if (type === 'ClusterIP') continue
    for (const p of s.spec.ports)
      if (p.name === 'metrics' || p.targetPort === 'metrics' || p.port === 9464 || p.targetPort === 9464)
        problems.push(`${where}: type ${type} exposes the metrics port (${p.name ?? p.port})`)
  }
  for (const d of objs.filter((o) => o.kind === 'Deployment')) {
    const labels = d.spec.template.metadata.labels
    const hasMetrics = d.spec.template.spec.containers.some((c) =>
      (c.ports ?? []).some((p) => p.name === 'metrics'),
    )
    if (!hasMetrics) continue
    const svc = services.find(
      (s) =>
        (s.spec.type ?? 'ClusterIP') === 'ClusterIP' &&
        matches(s.spec.selector, labels) &&
        s.spec.ports.some((p) => p.name === 'metrics' && p.targetPort === 'metrics'),
    )
    if (!svc)
      problems.push(`${file}: Deployment/${d.metadata.name}: no ClusterIP Service carries its metrics port`)
    else if (monitor && !matches(monitor.spec.selector.matchLabels, svc.metadata.labels))
      problems.push(`${file}: the ServiceMonitor does not select Service/${svc.metadata.name}`)
  }
}
if (problems.length) {
  for (const p of problems) console.error(`  ${p}`)
  process.exit(1)
}
console.log('  no metrics port on a LoadBalancer or NodePort Service; every one on a ClusterIP Service')
