/** The map key of a cooldown record. */
export function cooldownKey(kind: string, target: string): string {
  return `${kind}/${target}`;
}
