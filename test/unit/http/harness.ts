/** An in-process API on an ephemeral port, with in-memory keys and sessions and a driven clock. */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ApiKeys, type ApiKeyRecord, type ApiPlan } from '../../../server/src/auth/api-keys';
import type { Role } from '../../../server/src/auth/roles';
import { Sessions, type SessionRecord } from '../../../server/src/auth/sessions';
import { createHttpServer, type HealthReport, type HttpDeps } from '../../../server/src/http/app';
import type { RouteDef } from '../../../server/src/http/route';
import { authRoutes } from '../../../server/src/http/routes/index';
import { MemoryRepository } from '../../support/fakes';

export class ManualClock {
  constructor(public t = Date.UTC(2026, 0, 5, 12, 0, 0)) {}
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface TestApi {
  url: string;
  port: number;
  server: Server;
  keys: ApiKeys;
  sessions: Sessions;
  clock: ManualClock;
  /** A valid enterprise admin key (like the first-start key). */
  key: string;
  keyRecord: ApiKeyRecord;
  logs: string[];
  newKey(plan: ApiPlan, label?: string, role?: Role): Promise<string>;
  close(): Promise<void>;
}

export const HEALTH: HealthReport = { status: 'ok', service: 'cadre', version: '9.9.9', pid: 1, uptime_s: 0, components: {} };

export async function startTestApi(opts: { routes?: RouteDef[]; deps?: Partial<HttpDeps> } = {}): Promise<TestApi> {
  const clock = new ManualClock();
  const keys = new ApiKeys(new MemoryRepository<ApiKeyRecord>(), clock.now);
  const sessions = new Sessions(new MemoryRepository<SessionRecord>(), keys, clock);
  const { key, record } = await keys.create('test', 'enterprise', 'admin');
  const logs: string[] = [];
  const server = createHttpServer(
    { version: '9.9.9', health: () => HEALTH, log: (l) => logs.push(l), keys, sessions, clock, checkResponses: true, ...opts.deps },
    [...authRoutes({ keys, sessions }), ...(opts.routes ?? [])],
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`, port, server, keys, sessions, clock, key, keyRecord: record, logs,
    newKey: async (plan, label = plan, role = 'admin') => (await keys.create(label, plan, role)).key,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
