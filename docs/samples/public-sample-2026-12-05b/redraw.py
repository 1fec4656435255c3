# Re-draw the sample of /tmp/sample2 from a new run's findings (same seed, same
# eligibility), reusing the hand judgments of findings already judged.
import json, random, sys
newdir = sys.argv[1]  # holds findings_<repo>.json of the new run
repos = ['ppo2','mthread','tensorops','impls','cudaquiz']
key = lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check'])
def load(d):
    out = []
    for D in repos:
        for f in json.load(open(f'{d}/findings_{D}.json')):
            g = dict(f); g['repo'] = D; out.append(g)
    return out
old = load('/tmp/sample2'); new = load(newdir)
judg = json.load(open('/tmp/sample2/tools/judgments.json'))
s40 = json.load(open('/tmp/sample2/sample40.json'))
judged = {key(x): judg[str(x['n'])] for x in s40}
newkeys = {key(x): x for x in new}
print('old sample, as the new run reports each:')
for x in s40:
    k = key(x); n = newkeys.get(k)
    state = 'gone' if not n else ('uncalled' if n.get('uncalled') else 'eligible')
    print(' ', x['n'], x['repo'], x['file'].rsplit('/',1)[1], x['line'], x['check'], judged[k]['real'], '->', state)
elig = [x for x in new if not x.get('uncalled') and not x.get('incomplete')]
elig.sort(key=key)
print('eligible', len(elig), '(old', len([x for x in old if not x.get('uncalled') and not x.get('incomplete')]), ')')
random.seed(20261206)
s = random.sample(elig, 40) if len(elig) > 40 else elig
todo = []
real = 0
for i, x in enumerate(s, 1):
    j = judged.get(key(x))
    if j: real += j['real'].startswith('yes')
    else: todo.append(x)
    print(i, x['repo'], x['file'].rsplit('/',1)[1], x['line'], x['column'], x['check'], x['dependency'], 'judged:'+j['real'] if j else 'NEW')
print('reused', 40 - len(todo), 'real among reused', real, 'to judge', len(todo))
json.dump(s, open(newdir + '/sample40-redraw.json', 'w'), indent=1)
json.dump(todo, open(newdir + '/to-judge.json', 'w'), indent=1)
