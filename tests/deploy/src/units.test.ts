/**
 * What the systemd units must say (issue 15): an EnvironmentFile under /etc/maintd/, restart on
 * failure, a dedicated user, the sandbox, and a stop timeout longer than the master's shutdown
 * grace period. `systemd.e2e.test.ts` has systemd itself check the syntax.
 */
import { settings } from '@maintd/master';
import { describe, expect, it } from 'vitest';
import { SERVICES, directive, parseUnit, readRepoFile, timeSpanSecs } from './deploy-files.js';

/** Directives both units must carry, with the value each must have. */
const HARDENING: Readonly<Record<string, string>> = {
  NoNewPrivileges: 'true',
  ProtectSystem: 'strict',
  ProtectHome: 'true',
  PrivateTmp: 'true',
  PrivateDevices: 'true',
  ProtectKernelTunables: 'true',
  ProtectKernelModules: 'true',
  ProtectControlGroups: 'true',
  RestrictSUIDSGID: 'true',
  LockPersonality: 'true',
  AmbientCapabilities: '',
  CapabilityBoundingSet: '',
};

/** Seconds a stopping master needs beyond SHUTDOWN_GRACE_SECS to revoke its session and exit. */
const RELEASE_MARGIN_SECS = 15;

describe('deploy/systemd units', () => {
  for (const { unit: name, bin, app, envFile } of SERVICES) {
    describe(name, () => {
      const unit = parseUnit(readRepoFile(`deploy/systemd/${name}`));
      const service = (key: string): string | undefined => directive(unit, 'Service', key);

      it('runs the npm-installed binary, as a long-running exec service started with the network', () => {
        const manifest = JSON.parse(readRepoFile(`${app}/package.json`)) as { bin: Record<string, string> };
        expect(Object.keys(manifest.bin)).toContain(bin);
        expect(service('ExecStart')).toBe(`/usr/local/bin/${bin}`);
        expect(['exec', 'simple']).toContain(service('Type'));
        expect(directive(unit, 'Unit', 'After')).toContain('network-online.target');
        expect(directive(unit, 'Unit', 'Wants')).toContain('network-online.target');
        expect(directive(unit, 'Install', 'WantedBy')).toBe('multi-user.target');
      });

      it(`reads its settings from /etc/maintd/${envFile}, the installed copy of deploy/systemd/${envFile}`, () => {
        expect(unit.get('Service')?.get('EnvironmentFile')).toEqual([`/etc/maintd/${envFile}`]);
        // Comments in the unit must not point at a file of another name.
        expect(readRepoFile(`deploy/systemd/${name}`)).toContain(`install -m 0640 -g ${service('Group')} ${envFile}`);
      });

      it('restarts on failure, but not after a configuration error (exit 2)', () => {
        expect(service('Restart')).toBe('on-failure');
        expect(service('RestartPreventExitStatus')).toBe('2');
        expect(timeSpanSecs(service('RestartSec') ?? '0')).toBeGreaterThan(0);
      });

      it('runs as a dedicated user that maintd.sysusers.conf creates', () => {
        const user = service('User');
        expect(user).toMatch(/^maintd/);
        expect(service('Group')).toBe(user);
        const sysusers = readRepoFile('deploy/systemd/maintd.sysusers.conf');
        expect(sysusers).toMatch(new RegExp(`^u ${user} +- `, 'm'));
      });

      it('is sandboxed: read-only file system, no capabilities, no new privileges', () => {
        for (const [key, value] of Object.entries(HARDENING)) expect(service(key), key).toBe(value);
        // maintd and the exporter write nothing to disk: state is in etcd, aggregates in memory.
        expect(service('ReadWritePaths')).toBeUndefined();
        expect(service('StateDirectory')).toBeUndefined();
        // V8's JIT needs executable memory that was writable: this option would crash Node.js.
        expect(service('MemoryDenyWriteExecute')).toBeUndefined();
        expect(Number(service('LimitNOFILE'))).toBeGreaterThanOrEqual(65536);
      });

      it('stops with SIGTERM', () => {
        expect(service('KillSignal')).toBe('SIGTERM');
        expect(service('SendSIGKILL')).not.toBe('no');
      });
    });
  }

  it('gives a stopping master longer than SHUTDOWN_GRACE_SECS to let its tasks finish and release them', () => {
    const grace = settings.find((s) => s.env === 'SHUTDOWN_GRACE_SECS');
    expect(grace?.default).toBeDefined();
    const unit = parseUnit(readRepoFile('deploy/systemd/maintd.service'));
    const stop = timeSpanSecs(directive(unit, 'Service', 'TimeoutStopSec') ?? '0');
    expect(stop).toBeGreaterThanOrEqual(Number(grace?.default) + RELEASE_MARGIN_SECS);
    // …and the unit says how to keep it so when the setting is raised.
    expect(readRepoFile('deploy/systemd/maintd.service')).toMatch(
      /raise TimeoutStopSec[\s#]+to at least\s+SHUTDOWN_GRACE_SECS \+ 15/,
    );
  });

  it('parses time spans the way systemd does for the forms the units use', () => {
    expect(timeSpanSecs('45')).toBe(45);
    expect(timeSpanSecs('45s')).toBe(45);
    expect(timeSpanSecs('1min 30s')).toBe(90);
    expect(() => timeSpanSecs('soon')).toThrow();
  });
});
