/** deploy-ai's embedded skills: `readiness` (plan and deploy are not embedded yet). */
export * from './readiness';
