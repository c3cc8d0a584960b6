import { strict as assert } from 'node:assert';
import { Router } from '../../../server/src/http/router';
import { fieldPath } from '../../../server/src/http/validation';
import { defaultOperationId, pathParamNames } from '../../../server/src/http/route';

describe('router', () => {
  const r = new Router<string>()
    .add('POST', '/v1/agents/tasks', 'submit')
    .add('GET', '/v1/agents/tasks/{taskId}', 'task')
    .add('GET', '/v1/agents/list', 'list')
    .add('GET', '/v1/agents/{id}/status', 'agent-status')
    .add('POST', '/api/agents/tasks', 'api-submit')
    .add('GET', '/api/agents/{id}/{action}', 'action-get')
    .add('POST', '/api/agents/{id}/{action}', 'action-post')
    .add('GET', '/v1/customer/workflow/{id}', 'wf')
    .add('GET', '/v1/customer/workflow/{id}/status', 'wf-status');

  const found = (method: string, path: string) => {
    const m = r.find(method, path);
    return m.kind === 'found' ? [m.value, { ...m.params }] : m;
  };

  it('matches literal paths and parameters, literals first', () => {
    assert.deepEqual(found('GET', '/v1/agents/list'), ['list', {}]);
    assert.deepEqual(found('GET', '/v1/agents/tasks/task_1'), ['task', { taskId: 'task_1' }]);
    assert.deepEqual(found('GET', '/v1/agents/coder-ai/status'), ['agent-status', { id: 'coder-ai' }]);
    assert.deepEqual(found('GET', '/v1/agents/tasks/status'), ['task', { taskId: 'status' }], 'literal "tasks" wins over {id}');
    assert.deepEqual(found('POST', '/api/agents/req-ai/analyze'), ['action-post', { id: 'req-ai', action: 'analyze' }]);
    assert.deepEqual(found('GET', '/v1/customer/workflow/wf_1/status'), ['wf-status', { id: 'wf_1' }]);
  });

  it('falls back from a literal to a parameter when the literal branch has no route', () => {
    // /api/agents/tasks/{x} does not exist, so 'tasks' is taken as {id}.
    assert.deepEqual(found('GET', '/api/agents/tasks/analyze'), ['action-get', { id: 'tasks', action: 'analyze' }]);
  });

  it('decodes parameters and tolerates a trailing slash', () => {
    assert.deepEqual(found('GET', '/v1/agents/tasks/a%20b'), ['task', { taskId: 'a b' }]);
    assert.deepEqual(found('GET', '/v1/agents/list/'), ['list', {}]);
    assert.deepEqual(found('GET', '/v1/agents/tasks/%E0%A4%A'), { kind: 'not-found' }, 'a malformed escape matches nothing');
  });

  it('answers 405 material (every allowed method, HEAD with GET) or not found', () => {
    assert.deepEqual(r.find('DELETE', '/v1/agents/tasks'), { kind: 'method-not-allowed', allow: ['POST'] });
    assert.deepEqual(r.find('PUT', '/api/agents/x/y'), { kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'POST'] });
    assert.deepEqual(found('HEAD', '/v1/agents/list'), ['list', {}]);
    assert.deepEqual(r.find('GET', '/v2/anything'), { kind: 'not-found' });
    assert.deepEqual(r.find('GET', '/'), { kind: 'not-found' });
  });

  it('refuses a duplicate route', () => {
    assert.throws(() => r.add('GET', '/v1/agents/tasks/{other}', 'dup'), /duplicate route GET/);
  });
});

describe('route helpers', () => {
  it('names fields as dotted paths with indexes', () => {
    assert.equal(fieldPath('body', ['capabilities', 0]), 'body.capabilities[0]');
    assert.equal(fieldPath('body', []), 'body');
    assert.equal(fieldPath('query', ['execution_id']), 'query.execution_id');
    assert.equal(fieldPath('body', ['repository', 'url']), 'body.repository.url');
    assert.equal(fieldPath('body', ['a b', 1, 'x-y']), 'body["a b"][1].x-y');
  });

  it('derives operation ids and parameter names', () => {
    assert.equal(defaultOperationId('GET', '/v1/agents/tasks/{taskId}'), 'getV1AgentsTasksByTaskId');
    assert.equal(defaultOperationId('POST', '/v1/admin/rigor/invoke/{personality}'), 'postV1AdminRigorInvokeByPersonality');
    assert.equal(defaultOperationId('GET', '/v1/openapi.json'), 'getV1OpenapiJson');
    assert.deepEqual(pathParamNames('/api/agents/{id}/{action}'), ['id', 'action']);
  });
});
