import json, random
repos = ['ppo2','mthread','tensorops','impls','cudaquiz']
eligible = []
for D in repos:
    for f in json.load(open(f'/tmp/sample2/findings_{D}.json')):
        if f.get('uncalled') is True or f.get('incomplete') is True:
            continue
        g = dict(f); g['repo'] = D
        eligible.append(g)
eligible.sort(key=lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check']))
print('eligible', len(eligible))
random.seed(20261206)
s = random.sample(eligible, 40) if len(eligible) > 40 else eligible
for i, x in enumerate(s, 1): x['n'] = i
json.dump(s, open('/tmp/sample2/sample40.json', 'w'), indent=1)
for x in s:
    print(x['n'], x['repo'], x['file'].replace('/tmp/sample2/'+x['repo']+'/',''), x['line'], x['column'], x['check'], x['dependency'], 'FIX' if x['fixable'] else '')
