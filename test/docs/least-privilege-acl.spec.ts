import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLUSTER_ACL_RULES, LOCK_ACL } from '../support/least-privilege-acl.js';

const deployment = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');

/**
 * The least-privilege tests (test/chaos/least-privilege.spec.ts, test/topologies/*acl*) run the
 * user test/support/least-privilege-acl.ts defines: it must be the one docs/deployment.md
 * documents, or the tests prove an ACL nobody is told to use.
 */
describe('the documented least-privilege ACL', () => {
  it('lists exactly the commands the least-privilege tests run with', () => {
    const line = deployment.split('\n').find((text) => text.startsWith('ACL SETUSER locks '));
    expect(line).toBeDefined();
    const documented = line!.split(/\s+/).filter((word) => word.startsWith('+')).sort();
    expect(documented).toEqual(LOCK_ACL.filter((rule) => rule.startsWith('+')).sort());
  });

  it('names every command a Redis 7 Cluster adds', () => {
    const section = deployment.slice(deployment.indexOf('On a Redis 7 Cluster add'));
    const added = section.slice(0, section.indexOf(')')).replace(/\s+/g, ' ');
    for (const rule of CLUSTER_ACL_RULES) expect(added).toContain(rule);
  });
});
