import type { Member } from '../../clients/members.js';
import type { SessionUser } from '../../session/state.js';
import type { ClientRecord } from '../../storage/types.js';
import type { FormContext } from '../shared/form.js';

/** A developer page request whose member is signed in. */
export interface DeveloperContext extends FormContext {
  user: SessionUser;
  member: Member;
  /** The member's application the request names (`client_id`), once `loadOwnedApp` found it. */
  app: ClientRecord;
}
